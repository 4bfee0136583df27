package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"runtime"
	"slices"
	"strings"

	"github.com/ray-operator/ray-operator/internal/controlplane"
)

// tableHeader heads the Markdown rows report prints.
const tableHeader = "| kind | N | flags | time to ready (s) | operator writes (non-event) | CPU (s) | peak RSS (MiB) | writes by verb and resource |\n|---|---:|---|---:|---:|---:|---:|---|"

// report prints res as a JSON line and a Markdown row, and appends the JSON
// line to -json.
func report(o *options, res *Result) error {
	line, err := json.Marshal(res)
	if err != nil {
		return err
	}
	fmt.Fprintln(os.Stderr, string(line))
	fmt.Println(row(res))
	if o.jsonOut == "" {
		return nil
	}
	f, err := os.OpenFile(o.jsonOut, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(f, string(line))
	return errors.Join(err, f.Close())
}

// row is res as a Markdown table row.
func row(res *Result) string {
	var writes []string
	for _, k := range res.Writes.Keys() {
		writes = append(writes, fmt.Sprintf("%s %d", k, res.Writes[k]))
	}
	for _, k := range res.RefusedWrites.Keys() {
		writes = append(writes, fmt.Sprintf("refused %s: %d", k, res.RefusedWrites[k]))
	}
	for _, k := range slices.Sorted(maps.Keys(res.TerminatedWatchers)) {
		writes = append(writes, fmt.Sprintf("watches of %s closed by the API server: %d", k, res.TerminatedWatchers[k]))
	}
	for _, k := range res.OthersRefusedWrites.Keys() {
		writes = append(writes, fmt.Sprintf("refused of %s: %d", k, res.OthersRefusedWrites[k]))
	}
	for _, k := range slices.Sorted(maps.Keys(res.Extra)) {
		writes = append(writes, fmt.Sprintf("%s=%.3g", k, res.Extra[k]))
	}
	return fmt.Sprintf("| %s | %d | %s | %.1f | %d (%d) | %.1f | %.0f | %s |", res.Kind, res.N, res.Label,
		res.TimeToReadySeconds, res.WritesTotal, res.WritesNonEvent, res.CPUSeconds, res.PeakRSSMiB, strings.Join(writes, ", "))
}

func runtimeCPUs() int { return runtime.NumCPU() }

func repoRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	return controlplane.ModuleRoot(wd)
}
