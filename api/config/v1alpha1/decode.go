package v1alpha1

import (
	"bytes"
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/util/yaml"
)

// Decode parses a configuration file (YAML or JSON). apiVersion and kind may
// be omitted; when present they must be config.ray.io/v1alpha1 and
// Configuration. A field this version does not know is not an error, since a
// file written for a newer KubeRay must still load: it is returned as a
// warning for the caller to log. The result is not defaulted.
func Decode(data []byte) (Configuration, []string, error) {
	doc, err := yaml.ToJSON(data)
	if err != nil {
		return Configuration{}, nil, fmt.Errorf("decoding configuration: %w", err)
	}
	var cfg Configuration
	if err := json.Unmarshal(doc, &cfg); err != nil {
		return Configuration{}, nil, fmt.Errorf("decoding configuration: %w", err)
	}
	if err := checkTypeMeta(cfg); err != nil {
		return Configuration{}, nil, err
	}
	var warnings []string
	strict := json.NewDecoder(bytes.NewReader(doc))
	strict.DisallowUnknownFields()
	if err := strict.Decode(&Configuration{}); err != nil {
		warnings = append(warnings, fmt.Sprintf("configuration: ignoring what this version does not know: %v", err))
	}
	return cfg, warnings, nil
}

func checkTypeMeta(cfg Configuration) error {
	if v := cfg.APIVersion; v != "" && v != GroupVersion.String() {
		return fmt.Errorf("configuration: apiVersion %q is not %q", v, GroupVersion.String())
	}
	if k := cfg.Kind; k != "" && k != Kind {
		return fmt.Errorf("configuration: kind %q is not %q", k, Kind)
	}
	return nil
}
