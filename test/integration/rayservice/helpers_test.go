package rayservice_test

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// podLabel reads one label of a Pod ("" when the Pod is missing).
func podLabel(w *world, name, key string) string {
	w.t.Helper()
	pod := &corev1.Pod{}
	if err := w.c.Get(context.Background(), types.NamespacedName{Namespace: w.ns, Name: name}, pod); err != nil {
		return ""
	}
	return pod.Labels[key]
}
