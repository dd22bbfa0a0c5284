package main

import (
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"time"
)

// otlpSink is the OTLP/HTTP receiver -otlp starts in the benchmark's own
// process: the server, told to trace everything to it, pays all of
// tracing's cost (spans made, batched, encoded and sent over loopback),
// while the sink only reads and drops what it is sent, so a collector's
// work is not measured.
type otlpSink struct {
	srv       *http.Server
	url       string
	exports   atomic.Int64
	bytesRead atomic.Int64
}

// otlpStats is what the sink was sent during the run.
type otlpStats struct {
	Exports int64 `json:"exports"`
	Bytes   int64 `json:"bytes"`
}

func startOTLPSink() (*otlpSink, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &otlpSink{url: "http://" + ln.Addr().String()}
	s.srv = &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := io.Copy(io.Discard, r.Body)
		s.exports.Add(1)
		s.bytesRead.Add(n)
		// An empty ExportTraceServiceResponse: every span accepted.
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.WriteHeader(http.StatusOK)
	})}
	go s.srv.Serve(ln)
	return s, nil
}

// env is the child server's tracing configuration: every span, to the sink.
func (s *otlpSink) env() []string {
	return []string{"OTEL_EXPORTER_OTLP_ENDPOINT=" + s.url, "OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf",
		"OTEL_TRACES_SAMPLER=always_on"}
}

func (s *otlpSink) stats() *otlpStats {
	return &otlpStats{Exports: s.exports.Load(), Bytes: s.bytesRead.Load()}
}

func (s *otlpSink) close() { s.srv.Close() }
