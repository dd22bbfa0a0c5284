package relay

import (
	"github.com/prometheus/client_golang/prometheus"
)

// registerMetrics adds the relay's own families beside the SDK endpoints'
// (connections, refusals, evaluations, pushes).
func (r *Relay) registerMetrics() {
	reg := r.metrics.Registry()
	reg.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "bunting_relay_synced",
			Help: "1 while the relay's connection to its upstream is synced (Stable), else 0."},
			func() float64 {
				if state, _ := r.Upstream.State(); state == StateStable {
					return 1
				}
				return 0
			}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "bunting_relay_data_version_milliseconds",
			Help: "The newest flag or segment version the relay holds, in Unix milliseconds."},
			func() float64 { all, _ := r.Memory.Versions(); return float64(all) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "bunting_relay_last_sync_timestamp_seconds",
			Help: "When data last arrived from the upstream, in Unix seconds (0: never)."},
			func() float64 {
				if _, last := r.Upstream.State(); !last.IsZero() {
					return float64(last.UnixNano()) / 1e9
				}
				return 0
			}),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "bunting_relay_events_forwarded_total",
			Help: "SDK events sent on to the upstream."}, func() float64 { return float64(r.Forward.Sent.Load()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "bunting_relay_events_dropped_total",
			Help: "SDK events dropped: more were waiting for the upstream than the relay holds, or the upstream refused them."},
			func() float64 { return float64(r.Forward.Dropped.Load() + r.Forward.Failed.Load()) }),
	)
}
