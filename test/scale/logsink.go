package main

import (
	"io"
	"sync"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

// operatorLog is where controller-runtime's global logger writes: the
// in-process operator's log file during a rayjob run, nowhere otherwise
// (the control plane's CRD installation logs through it too). The global
// logger can be set only once, so each run switches its writer instead.
var operatorLog = &switchWriter{w: io.Discard}

// switchWriter is an io.Writer whose target can change.
type switchWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *switchWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

// set makes later writes go to w (io.Discard for nil).
func (s *switchWriter) set(w io.Writer) {
	if w == nil {
		w = io.Discard
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.w = w
}

// setUpLogging points controller-runtime's global logger at operatorLog.
func setUpLogging() {
	ctrl.SetLogger(zap.New(zap.WriteTo(operatorLog)))
}
