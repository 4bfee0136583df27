// Package serveapps is the RayService controller's side of the Ray Serve
// REST API: the body it PUTs for a RayService's serveConfigV2 (with a
// target_capacity during incremental upgrades), what it records on a
// RayCluster about the config it applied there, when a config must be
// applied again, and how Serve's answer becomes RayService status.
package serveapps

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"sigs.k8s.io/yaml"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/dashboard"
)

// DefaultAppName is how status shows an application Serve names "".
const DefaultAppName = "default"

// ConfigJSON is the body of PUT /api/serve/applications/ for a serveConfigV2
// (YAML), with target_capacity set when targetCapacity is not nil.
func ConfigJSON(serveConfigV2 string, targetCapacity *int32) ([]byte, error) {
	config := map[string]any{}
	if err := yaml.Unmarshal([]byte(serveConfigV2), &config); err != nil {
		return nil, fmt.Errorf("serveConfigV2 is not a YAML map: %w", err)
	}
	if config == nil {
		config = map[string]any{}
	}
	if targetCapacity != nil {
		config["target_capacity"] = *targetCapacity
	}
	return json.Marshal(config)
}

// Validate reports whether serveConfigV2 can be sent to Serve at all.
func Validate(serveConfigV2 string) error {
	_, err := ConfigJSON(serveConfigV2, nil)
	return err
}

// maxRecordedConfig bounds the config text kept in a RayCluster annotation
// (annotations share a 256 KiB budget); larger configs are recorded by hash.
const maxRecordedConfig = 64 << 10

// hashPrefix marks a recorded config kept as its hash only.
const hashPrefix = "sha256:"

// Record is the value recorded on a RayCluster after serveConfigV2 was
// applied to it: the config itself, or its hash when it is too large to keep
// in an annotation.
func Record(serveConfigV2 string) string {
	if len(serveConfigV2) <= maxRecordedConfig && !strings.HasPrefix(serveConfigV2, hashPrefix) {
		return serveConfigV2
	}
	sum := sha256.Sum256([]byte(serveConfigV2))
	return hashPrefix + hex.EncodeToString(sum[:])
}

// Recorded reports whether recorded, a value Record made, stands for
// serveConfigV2.
func Recorded(recorded, serveConfigV2 string) bool {
	return recorded != "" && recorded == Record(serveConfigV2)
}

// RecordedConfig is the config text a record keeps, or false when it kept
// only a hash.
func RecordedConfig(recorded string) (string, bool) {
	if recorded == "" || strings.HasPrefix(recorded, hashPrefix) {
		return "", false
	}
	return recorded, true
}

// NeedsApply reports whether serveConfigV2 must be PUT on a cluster: it was
// never applied there (nothing recorded), another config was, or Serve
// reports no application at all (a head that restarted without GCS fault
// tolerance lost them). An empty config is never applied: it has nothing to
// deploy.
func NeedsApply(recorded, serveConfigV2 string, numApps int) bool {
	if strings.TrimSpace(serveConfigV2) == "" {
		return false
	}
	return !Recorded(recorded, serveConfigV2) || numApps == 0
}

// Statuses turns Serve's details into RayService application statuses; the
// application Serve names "" is shown as "default".
func Statuses(details *dashboard.ServeDetails) map[string]rayv1.AppStatus {
	if details == nil || len(details.Applications) == 0 {
		return nil
	}
	out := make(map[string]rayv1.AppStatus, len(details.Applications))
	for name, app := range details.Applications {
		if name == "" {
			name = DefaultAppName
		}
		status := rayv1.AppStatus{Status: app.Status, Message: app.Message}
		for depName, dep := range app.Deployments {
			if status.Deployments == nil {
				status.Deployments = map[string]rayv1.ServeDeploymentStatus{}
			}
			status.Deployments[depName] = rayv1.ServeDeploymentStatus{Status: dep.Status, Message: dep.Message}
		}
		out[name] = status
	}
	return out
}

// AllRunning reports whether a cluster is ready to serve: it runs at least
// one application and every application is RUNNING.
func AllRunning(apps map[string]rayv1.AppStatus) bool {
	if len(apps) == 0 {
		return false
	}
	for _, app := range apps {
		if app.Status != rayv1.ApplicationStatusRunning {
			return false
		}
	}
	return true
}
