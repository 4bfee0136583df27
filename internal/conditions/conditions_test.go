package conditions_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ray-operator/ray-operator/internal/conditions"
)

type (
	condType   string
	condReason string
)

const ready condType = "Ready"

var (
	t0 = metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	t1 = metav1.NewTime(t0.Add(time.Minute))
)

func TestSet(t *testing.T) {
	cases := map[string]struct {
		before []metav1.Condition
		set    func(*[]metav1.Condition)
		want   []metav1.Condition
	}{
		"new condition, stamped now with the generation": {
			set: func(c *[]metav1.Condition) {
				conditions.MarkTrue(c, ready, condReason("Up"), "up", conditions.At(t1, 3))
			},
			want: []metav1.Condition{{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Up", Message: "up",
				ObservedGeneration: 3, LastTransitionTime: t1}},
		},
		"same status keeps the transition time, takes reason, message, generation": {
			before: []metav1.Condition{{Type: "Ready", Status: metav1.ConditionFalse, Reason: "Down", ObservedGeneration: 1, LastTransitionTime: t0}},
			set: func(c *[]metav1.Condition) {
				conditions.MarkFalse(c, ready, condReason("Gone"), "gone", conditions.At(t1, 2))
			},
			want: []metav1.Condition{{Type: "Ready", Status: metav1.ConditionFalse, Reason: "Gone", Message: "gone",
				ObservedGeneration: 2, LastTransitionTime: t0}},
		},
		"status change moves the transition time": {
			before: []metav1.Condition{{Type: "Ready", Status: metav1.ConditionFalse, Reason: "Down", LastTransitionTime: t0}},
			set: func(c *[]metav1.Condition) {
				conditions.MarkUnknown(c, ready, condReason("Lost"), "", conditions.Stamp{Now: t1})
			},
			want: []metav1.Condition{{Type: "Ready", Status: metav1.ConditionUnknown, Reason: "Lost", LastTransitionTime: t1}},
		},
		"no generation writes none": {
			set: func(c *[]metav1.Condition) {
				conditions.Set(c, ready, metav1.ConditionTrue, condReason("Up"), "", conditions.Stamp{Now: t0})
			},
			want: []metav1.Condition{{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Up", LastTransitionTime: t0}},
		},
		"remove": {
			before: []metav1.Condition{{Type: "Ready"}, {Type: "Other"}},
			set:    func(c *[]metav1.Condition) { conditions.Remove(c, ready) },
			want:   []metav1.Condition{{Type: "Other"}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := tc.before
			tc.set(&got)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("conditions (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRead(t *testing.T) {
	conds := []metav1.Condition{
		{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Up"},
		{Type: "Stalled", Status: metav1.ConditionFalse, Reason: "Moving"},
	}
	cases := []struct {
		name string
		got  bool
		want bool
	}{
		{"IsTrue of a True condition", conditions.IsTrue(conds, ready), true},
		{"IsTrue of a False condition", conditions.IsTrue(conds, condType("Stalled")), false},
		{"IsTrue of a missing condition", conditions.IsTrue(conds, condType("Gone")), false},
		{"Has with status and reason", conditions.Has(conds, condType("Stalled"), metav1.ConditionFalse, condReason("Moving")), true},
		{"Has with another reason", conditions.Has(conds, ready, metav1.ConditionTrue, condReason("Down")), false},
		{"Has of a missing condition", conditions.Has(conds, condType("Gone"), metav1.ConditionTrue, condReason("Up")), false},
		{"Get finds", conditions.Get(conds, ready) == &conds[0], true},
		{"Get of a missing condition", conditions.Get(conds, condType("Gone")) == nil, true},
	}
	for _, tc := range cases {
		if tc.got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, tc.got, tc.want)
		}
	}
}
