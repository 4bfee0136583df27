package imagestore

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
)

// DockerConfigKeychain is the credentials of a pod's imagePullSecrets: the
// contents of secrets of type kubernetes.io/dockerconfigjson
// (.dockerconfigjson, {"auths": {...}}) or kubernetes.io/dockercfg
// (.dockercfg, the map alone), tried in order as the kubelet does. A key
// names a registry ("registry.example:5000", "https://index.docker.io/v1/")
// or a repository prefix in it ("registry.example/team"); wildcard keys
// ("*.example") are not matched.
type DockerConfigKeychain struct{ entries []credential }

type credential struct {
	host, path string
	auth       authn.AuthConfig
}

var _ authn.Keychain = DockerConfigKeychain{}

// ParseDockerConfigs reads the contents of imagePullSecrets in the pod's
// order; a secret that is not such JSON is an error naming its position.
func ParseDockerConfigs(configs ...[]byte) (DockerConfigKeychain, error) {
	var k DockerConfigKeychain
	for i, raw := range configs {
		var doc struct {
			Auths map[string]authn.AuthConfig `json:"auths"`
		}
		if err := json.Unmarshal(raw, &doc); err != nil {
			return DockerConfigKeychain{}, fmt.Errorf("image pull secret %d: %w", i, err)
		}
		auths := doc.Auths
		if auths == nil {
			// .dockercfg: the map of registries alone.
			if err := json.Unmarshal(raw, &auths); err != nil {
				return DockerConfigKeychain{}, fmt.Errorf("image pull secret %d: %w", i, err)
			}
		}
		var entries []credential
		for key, auth := range auths {
			host, path := splitKey(key)
			entries = append(entries, credential{host: host, path: path, auth: auth})
		}
		// Within one secret the longest repository prefix wins.
		slices.SortStableFunc(entries, func(a, b credential) int {
			return cmp.Or(cmp.Compare(len(b.path), len(a.path)), cmp.Compare(a.host+"/"+a.path, b.host+"/"+b.path))
		})
		k.entries = append(k.entries, entries...)
	}
	return k, nil
}

// splitKey turns a docker config key into a registry host (as
// go-containerregistry names it) and an optional repository prefix.
func splitKey(key string) (host, path string) {
	key = strings.TrimPrefix(strings.TrimPrefix(key, "https://"), "http://")
	host, path, _ = strings.Cut(key, "/")
	path = strings.TrimSuffix(path, "/")
	if path == "v1" || path == "v2" {
		path = ""
	}
	if host == "docker.io" {
		host = name.DefaultRegistry
	}
	return host, path
}

// Resolve returns the credentials of the first entry for target's registry
// whose repository prefix (if any) target is under; anonymous if none.
func (k DockerConfigKeychain) Resolve(target authn.Resource) (authn.Authenticator, error) {
	repo := strings.TrimPrefix(target.String(), target.RegistryStr())
	repo = strings.TrimPrefix(repo, "/")
	for _, c := range k.entries {
		if c.host != target.RegistryStr() {
			continue
		}
		if c.path != "" && repo != c.path && !strings.HasPrefix(repo, c.path+"/") {
			continue
		}
		return authn.FromConfig(c.auth), nil
	}
	return authn.Anonymous, nil
}
