// Package plugins lists the batch scheduler plugins by the name
// --batch-scheduler (or the configuration's batchScheduler) gives them, and
// the KubernetesWAS plugin, which its feature gate chooses instead.
package plugins

import (
	"fmt"
	"slices"
	"strings"

	configv1alpha1 "github.com/ray-operator/ray-operator/api/config/v1alpha1"
	"github.com/ray-operator/ray-operator/internal/batchscheduler"
	"github.com/ray-operator/ray-operator/internal/batchscheduler/kaischeduler"
	"github.com/ray-operator/ray-operator/internal/batchscheduler/kuberneteswas"
	"github.com/ray-operator/ray-operator/internal/batchscheduler/schedulerplugins"
	"github.com/ray-operator/ray-operator/internal/batchscheduler/volcano"
	"github.com/ray-operator/ray-operator/internal/batchscheduler/yunikorn"
)

// factories are the plugins by name.
var factories = map[string]batchscheduler.Factory{
	volcano.Name:          volcano.Factory{},
	yunikorn.Name:         yunikorn.Factory{},
	kaischeduler.Name:     kaischeduler.Factory{},
	schedulerplugins.Name: schedulerplugins.Factory{},
}

// Names are the plugins' names, sorted.
func Names() []string {
	names := make([]string, 0, len(factories))
	for n := range factories {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Selected is the plugin the configuration chooses: the KubernetesWAS
// plugin when its gate is on (kubernetesWAS; validation refuses it with a
// batch scheduler), batchScheduler, or volcano for the deprecated
// enableBatchScheduler; "" for none.
func Selected(cfg configv1alpha1.Configuration, kubernetesWAS bool) string {
	if kubernetesWAS {
		return kuberneteswas.Name
	}
	if cfg.EnableBatchScheduler {
		return volcano.Name
	}
	return cfg.BatchScheduler
}

// Factory returns the factory of the named plugin; an unknown name is an
// error naming the known ones.
func Factory(name string) (batchscheduler.Factory, error) {
	if name == kuberneteswas.Name {
		return kuberneteswas.Factory{}, nil
	}
	f, ok := factories[name]
	if !ok {
		return nil, fmt.Errorf("batch scheduler %q is not supported; use one of %s", name, strings.Join(Names(), ", "))
	}
	return f, nil
}
