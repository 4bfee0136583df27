package v1alpha1

import (
	"fmt"

	"sigs.k8s.io/yaml"
)

// Decode parses a configuration file (YAML or JSON). apiVersion and kind may
// be omitted; when present they must be config.ray.io/v1alpha1 and
// Configuration. A field this version does not know is not an error, since a
// file written for a newer KubeRay must still load: it is returned as a
// warning for the caller to log. The result is not defaulted.
func Decode(data []byte) (Configuration, []string, error) {
	var cfg Configuration
	if err := yaml.Unmarshal(data, &cfg); err != nil {
		return Configuration{}, nil, fmt.Errorf("decoding configuration: %w", err)
	}
	if err := checkTypeMeta(cfg); err != nil {
		return Configuration{}, nil, err
	}
	var warnings []string
	var strict Configuration
	if err := yaml.UnmarshalStrict(data, &strict); err != nil {
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
