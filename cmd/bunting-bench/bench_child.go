package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"
)

// child is a process this executable started as one of its bench commands
// (the server, the relay). It runs until its standard input closes, so a
// bench that dies takes its children with it.
type child struct {
	cmd    *exec.Cmd
	stdin  io.Closer
	exited chan error
	pid    int
}

// childEnv is this process's environment without Bunting's and
// OpenTelemetry's settings: a child runs with only those the bench gives it,
// and tracing is on only where the bench asks for it.
func childEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "BUNTING_") && !strings.HasPrefix(kv, "OTEL_") {
			env = append(env, kv)
		}
	}
	return env
}

// startChild starts this executable with args and env, writing its output to
// logPath (truncated); what names the child in the error.
func startChild(what, logPath string, env []string, args ...string) (*child, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	logFile, err := os.OpenFile(logPath, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, err
	}
	defer logFile.Close() // the child has its own descriptor
	cmd := exec.Command(exe, args...)
	cmd.Env, cmd.Stdout, cmd.Stderr = env, logFile, logFile
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start the %s: %w", what, err)
	}
	c := &child{cmd: cmd, stdin: stdin, exited: make(chan error, 1), pid: cmd.Process.Pid}
	go func() { c.exited <- cmd.Wait() }()
	return c, nil
}

// awaitReady asks ready every interval until it says yes. It gives up with
// exited's error when the child ends first, with late's (the child stopped)
// once deadline has passed, and with ctx's (the child stopped) when ctx ends.
func (c *child) awaitReady(ctx context.Context, deadline time.Time, every time.Duration, ready func() bool,
	exited func(error) error, late func() error) error {
	for !ready() {
		select {
		case err := <-c.exited:
			return exited(err)
		case <-ctx.Done():
			c.stop()
			return ctx.Err()
		case <-time.After(every):
		}
		if time.Now().After(deadline) {
			c.stop()
			return late()
		}
	}
	return nil
}

// stop closes the child's standard input, which ends it, and waits.
func (c *child) stop() {
	c.stdin.Close()
	select {
	case <-c.exited:
	case <-time.After(30 * time.Second):
		c.cmd.Process.Kill()
		<-c.exited
	}
}
