// Package conditions sets and reads the metav1.Conditions in the status of
// every kind (RayCluster, RayJob's cluster, RayService, RayCronJob), the
// one way: a condition's lastTransitionTime moves only when its status
// changes, and its observedGeneration is the generation the pass saw.
// Condition types and reasons may be any string type (rayv1's are typed).
package conditions

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Stamp is when a pass sets conditions, and for which generation of the
// object.
type Stamp struct {
	// Now is the pass's time, from the injected clock: the transition time
	// of a condition whose status changes.
	Now metav1.Time
	// Generation is written as each condition's observedGeneration. Zero
	// writes none, as for RayCluster's conditions (KubeRay's carry none).
	Generation int64
}

// At is the Stamp of a pass at now over generation.
func At(now metav1.Time, generation int64) Stamp {
	return Stamp{Now: now, Generation: generation}
}

// Set sets condition t in conds to status, reason and message. Its
// lastTransitionTime becomes at.Now only when the status changes (or the
// condition is new); reason, message and observedGeneration always follow.
func Set[T, R ~string](conds *[]metav1.Condition, t T, status metav1.ConditionStatus, reason R, message string, at Stamp) {
	meta.SetStatusCondition(conds, metav1.Condition{
		Type: string(t), Status: status, Reason: string(reason), Message: message,
		ObservedGeneration: at.Generation, LastTransitionTime: at.Now,
	})
}

// MarkTrue sets condition t True with reason and message.
func MarkTrue[T, R ~string](conds *[]metav1.Condition, t T, reason R, message string, at Stamp) {
	Set(conds, t, metav1.ConditionTrue, reason, message, at)
}

// MarkFalse sets condition t False with reason and message.
func MarkFalse[T, R ~string](conds *[]metav1.Condition, t T, reason R, message string, at Stamp) {
	Set(conds, t, metav1.ConditionFalse, reason, message, at)
}

// MarkUnknown sets condition t Unknown with reason and message.
func MarkUnknown[T, R ~string](conds *[]metav1.Condition, t T, reason R, message string, at Stamp) {
	Set(conds, t, metav1.ConditionUnknown, reason, message, at)
}

// Remove removes condition t from conds, if there.
func Remove[T ~string](conds *[]metav1.Condition, t T) {
	meta.RemoveStatusCondition(conds, string(t))
}

// Get returns condition t of conds, or nil.
func Get[T ~string](conds []metav1.Condition, t T) *metav1.Condition {
	return meta.FindStatusCondition(conds, string(t))
}

// IsTrue reports whether condition t is in conds and True.
func IsTrue[T ~string](conds []metav1.Condition, t T) bool {
	return meta.IsStatusConditionTrue(conds, string(t))
}

// Has reports whether condition t is in conds with status and reason.
func Has[T, R ~string](conds []metav1.Condition, t T, status metav1.ConditionStatus, reason R) bool {
	c := Get(conds, t)
	return c != nil && c.Status == status && c.Reason == string(reason)
}
