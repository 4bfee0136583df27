package main

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestDocSnippets keeps docs/client.md in step with this program: every Go
// block of the page is a verbatim part of main.go.
func TestDocSnippets(t *testing.T) {
	doc, err := os.ReadFile("../../docs/client.md")
	if err != nil {
		t.Fatal(err)
	}
	source, err := os.ReadFile("main.go")
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```go\n(.*?)```").FindAllSubmatch(doc, -1)
	if len(blocks) == 0 {
		t.Fatal("docs/client.md has no Go block")
	}
	for _, b := range blocks {
		if !strings.Contains(string(source), string(b[1])) {
			t.Errorf("docs/client.md shows code that main.go does not have:\n%s", b[1])
		}
	}
}
