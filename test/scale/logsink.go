package main

import (
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/ray-operator/ray-operator/internal/syncwriter"
)

// operatorLog is where controller-runtime's global logger writes: the
// in-process operator's log file during a rayjob run, nowhere otherwise
// (the control plane's CRD installation logs through it too). The global
// logger can be set only once, so each run switches its writer instead.
var operatorLog = syncwriter.New(nil)

// setUpLogging points controller-runtime's global logger at operatorLog.
func setUpLogging() {
	ctrl.SetLogger(zap.New(zap.WriteTo(operatorLog)))
}
