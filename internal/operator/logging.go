package operator

import (
	"fmt"

	"github.com/go-logr/logr"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"gopkg.in/natefinch/lumberjack.v2"
	ctrlzap "sigs.k8s.io/controller-runtime/pkg/log/zap"

	configv1alpha1 "github.com/ray-operator/ray-operator/api/config/v1alpha1"
	"github.com/ray-operator/ray-operator/internal/lazylog"
)

// Log file rotation, as KubeRay's.
const (
	logFileMaxSizeMB  = 500
	logFileMaxBackups = 10
	logFileMaxAgeDays = 30
)

// NewLogger builds the operator's logger: stdout with the configured
// encoder and, when a log file is configured, a rotated copy in that file
// with its own encoder. closeFn closes the file. Values added to it are
// encoded only into the lines it writes (lazylog).
func NewLogger(cfg configv1alpha1.Configuration, opts ctrlzap.Options) (logger logr.Logger, closeFn func() error, err error) {
	opts.Encoder, err = newEncoder(cfg.LogStdoutEncoder)
	if err != nil {
		return logr.Logger{}, nil, fmt.Errorf("log-stdout-encoder: %w", err)
	}
	closeFn = func() error { return nil }
	if cfg.LogFile != "" {
		fileEncoder, err := newEncoder(cfg.LogFileEncoder)
		if err != nil {
			return logr.Logger{}, nil, fmt.Errorf("log-file-encoder: %w", err)
		}
		file := &lumberjack.Logger{
			Filename:   cfg.LogFile,
			MaxSize:    logFileMaxSizeMB,
			MaxBackups: logFileMaxBackups,
			MaxAge:     logFileMaxAgeDays,
		}
		fileCore := zapcore.NewCore(fileEncoder, zapcore.AddSync(file), zapcore.InfoLevel)
		opts.ZapOpts = append(opts.ZapOpts, zap.WrapCore(func(c zapcore.Core) zapcore.Core {
			return zapcore.NewTee(c, fileCore)
		}))
		closeFn = file.Close
	}
	return lazylog.Wrap(ctrlzap.New(ctrlzap.UseFlagOptions(&opts))), closeFn, nil
}

func newEncoder(name string) (zapcore.Encoder, error) {
	ec := zap.NewProductionEncoderConfig()
	ec.EncodeTime = zapcore.ISO8601TimeEncoder
	switch name {
	case configv1alpha1.EncoderJSON, "":
		return zapcore.NewJSONEncoder(ec), nil
	case configv1alpha1.EncoderConsole:
		return zapcore.NewConsoleEncoder(ec), nil
	default:
		return nil, fmt.Errorf("unknown encoder %q: use %q or %q", name, configv1alpha1.EncoderJSON, configv1alpha1.EncoderConsole)
	}
}
