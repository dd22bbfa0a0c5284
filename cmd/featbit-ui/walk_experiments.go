package main

import (
	"strings"
)

// The walk's experiment steps: a metric made in FeatBit's Metric drawer,
// an experiment on the walk's flag in its Experiment drawer (the
// confidence level left at 95%), started and
// its results read on the flag's Experimentation tab, as a FeatBit user
// runs an A/B test.

const (
	metricName      = "Checkout"
	metricEventName = "checkout"
)

func createMetric(w *walker) error {
	mark := w.rec.count()
	if err := w.open("/experiments/metrics"); err != nil {
		return err
	}
	if _, err := w.expect(mark, "GET", "/envs/[^/]+/experiment-metrics"); err != nil {
		return err
	}
	if err := w.settle(); err != nil {
		return err
	}
	if err := w.click("Add Metric"); err != nil {
		return err
	}
	if err := w.typeInto("Name", metricName); err != nil {
		return err
	}
	ownerName, _, _ := strings.Cut(ownerEmail, "@")
	if err := w.choose("Select maintainer", 0, ownerName, ownerName, true); err != nil {
		return err
	}
	if err := w.click("Conversion rate", "label"); err != nil {
		return err
	}
	if err := w.typeInto("Event name", metricEventName); err != nil {
		return err
	}
	mark = w.rec.count()
	if err := w.clickWhenEnabled("Save"); err != nil {
		return err
	}
	if _, err := w.expect(mark, "POST", "/envs/[^/]+/experiment-metrics$"); err != nil {
		return err
	}
	// The drawer closes and the list shows it, from the answer.
	return w.waitText(metricEventName)
}

func createExperiment(w *walker) error {
	mark := w.rec.count()
	if err := w.open("/experiments/overview"); err != nil {
		return err
	}
	if _, err := w.expect(mark, "GET", "/envs/[^/]+/experiments/status-count"); err != nil {
		return err
	}
	if err := w.settle(); err != nil {
		return err
	}
	if err := w.click("Add"); err != nil {
		return err
	}
	if err := w.choose("Select feature flag", 0, w.flagName, w.flagName, true); err != nil {
		return err
	}
	if err := w.choose("Metric", 0, "", metricName, false); err != nil {
		return err
	}
	// The drawer lists the flag's variations by their values.
	if err := w.choose("Select baseline variation", 0, "", "false", false); err != nil {
		return err
	}
	// The confidence level keeps its default, 95% (alpha 0.05).
	mark = w.rec.count()
	if err := w.clickWhenEnabled("Save"); err != nil {
		return err
	}
	if _, err := w.expect(mark, "POST", "/envs/[^/]+/experiments$"); err != nil {
		return err
	}
	return w.waitText(metricName)
}

func startExperiment(w *walker) error {
	mark := w.rec.count()
	if err := w.open("/feature-flags/" + w.flagKey + "/experimentations"); err != nil {
		return err
	}
	if _, err := w.expect(mark, "GET", "/envs/[^/]+/experiments$"); err != nil {
		return err
	}
	// The tab refreshes its results on a timer, so Angular is never
	// stable here: the walk waits for what it reads instead.
	if err := w.waitText(metricName); err != nil {
		return err
	}
	mark = w.rec.count()
	if err := w.click("Start"); err != nil {
		return err
	}
	if _, err := w.expect(mark, "POST", "/envs/[^/]+/experiments/[^/]+$"); err != nil {
		return err
	}
	// A recording experiment offers Stop experiment and reads its results.
	if err := w.waitText("Stop experiment"); err != nil {
		return err
	}
	mark = w.rec.count()
	if err := w.click("Refresh"); err != nil {
		return err
	}
	_, err := w.expect(mark, "PUT", "/envs/[^/]+/experiments/iteration-results")
	return err
}
