package e2eutil

import (
	"errors"
	"testing"
	"time"
)

func TestLongestGap(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC)
	ok := func(s float64) Reply { return Reply{At: t0.Add(time.Duration(s * float64(time.Second))), Answer: "v1"} }
	failed := func(s float64) Reply {
		return Reply{At: t0.Add(time.Duration(s * float64(time.Second))), Err: errors.New("refused")}
	}
	tests := map[string]struct {
		replies  []Reply
		gap      time.Duration
		fromSecs float64
	}{
		"none":                  {},
		"all answered":          {replies: []Reply{ok(0), ok(1), ok(1.5)}, gap: time.Second, fromSecs: 0},
		"failures in between":   {replies: []Reply{ok(0), ok(1), failed(2), failed(3), ok(4), ok(4.5)}, gap: 3 * time.Second, fromSecs: 1},
		"failures at the start": {replies: []Reply{failed(0), failed(2), ok(5), ok(6)}, gap: 5 * time.Second, fromSecs: 0},
		"failures at the end":   {replies: []Reply{ok(0), ok(1), failed(2), failed(9)}, gap: 8 * time.Second, fromSecs: 1},
		"only failures":         {replies: []Reply{failed(0), failed(4)}, gap: 4 * time.Second, fromSecs: 0},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			gap, from := LongestGap(tc.replies)
			if gap != tc.gap {
				t.Errorf("gap %v, want %v", gap, tc.gap)
			}
			if want := t0.Add(time.Duration(tc.fromSecs * float64(time.Second))); len(tc.replies) > 0 && !from.Equal(want) {
				t.Errorf("from %v, want %v", from, want)
			}
		})
	}
}
