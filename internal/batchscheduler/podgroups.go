package batchscheduler

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// PodGroups writes the PodGroups of a plugin that makes them (Volcano,
// scheduler-plugins), with the operator's client.
type PodGroups struct {
	// Client reads and writes the PodGroups.
	Client client.Client
	// Plugin is the plugin's name, for logs.
	Plugin string
}

// Create creates pg, of a gang of minMember Pods, and reports whether it
// did. A PodGroup that exists already (the cache had not seen it yet, or
// another pass made it) is left as it is.
func (p PodGroups) Create(ctx context.Context, pg client.Object, minMember int32) (bool, error) {
	if err := p.Client.Create(ctx, pg); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return false, nil
		}
		return false, fmt.Errorf("creating PodGroup %s: %w", klog.KObj(pg), err)
	}
	ctrl.LoggerFrom(ctx).WithName(p.Plugin).Info("Created PodGroup", "podGroup", klog.KObj(pg), "minMember", minMember)
	return true, nil
}
