package etcdclient

import (
	"os"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// embeddedEtcdLogger logs the embedded etcd's errors to stderr, minus the
// ones every clean shutdown produces: its listeners report being closed as
// a serving failure.
func embeddedEtcdLogger() *zap.Logger {
	enc := zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig())
	core := zapcore.NewCore(enc, zapcore.Lock(os.Stderr), zapcore.ErrorLevel)
	return zap.New(shutdownNoiseFilter{core})
}

// shutdownNoiseFilter drops etcd's "serving failed" entries, which it logs
// only when its listeners close; a real start failure is returned by
// embed.StartEtcd instead.
type shutdownNoiseFilter struct{ zapcore.Core }

func (f shutdownNoiseFilter) Check(e zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if e.Message == "setting up serving from embedded etcd failed." {
		return ce
	}
	return f.Core.Check(e, ce)
}

func (f shutdownNoiseFilter) With(fields []zapcore.Field) zapcore.Core {
	return shutdownNoiseFilter{f.Core.With(fields)}
}
