package testenv

import (
	"os"
	"sync"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

// LogEnv names the environment variable that, set to 1, makes
// controller-runtime (envtest, managers, controllers) log to stderr in
// integration tests. By default they log nothing.
const LogEnv = "RAY_OPERATOR_TEST_LOG"

// loggerOnce sets controller-runtime's logger once per test binary.
var loggerOnce sync.Once

// setLogger gives controller-runtime a logger the first time an environment
// starts. Without one, controller-runtime prints "log.SetLogger(...) was
// never called" with a stack trace once something logs. The logger is
// process-wide and outlives single tests, so it writes to stderr rather
// than through a testing.T. Doing it once leaves a test free to install its
// own logger (to look at the logs) after starting its environment.
func setLogger() {
	loggerOnce.Do(func() {
		if os.Getenv(LogEnv) == "1" {
			ctrllog.SetLogger(zap.New(zap.WriteTo(os.Stderr), zap.UseDevMode(true)))
			return
		}
		ctrllog.SetLogger(logr.Discard())
	})
}
