package chromium

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/distscrape/distscrape/fetch"
	"github.com/distscrape/distscrape/fetch/render"
)

// stepFind bounds how long a fill or click step looks for its element; a
// wait step looks until the page's timeout.
const stepFind = 5 * time.Second

// runSteps runs rule.Steps in order. A step that fails is a final error
// wrapping render.ErrStep and naming the step (number, action, selector;
// never a fill's value, which may be a password).
func runSteps(tab context.Context, icp *interceptor, steps []render.Step) error {
	for i, s := range steps {
		if err := runStep(tab, icp, s); err != nil {
			return fetch.Final("step failed", fmt.Errorf("%w: step %d (%s %q): %w", render.ErrStep, i+1, s.Action, s.Selector, err))
		}
	}
	// A click may have started a navigation or requests: let them finish.
	return waitIdle(tab, icp)
}

func runStep(tab context.Context, icp *interceptor, s render.Step) error {
	sel, _ := json.Marshal(strings.TrimSpace(s.Selector))
	find := context.Background()
	if s.Action != render.StepWait {
		var cancel context.CancelFunc
		find, cancel = context.WithTimeout(find, stepFind)
		defer cancel()
	}
	if err := waitElement(tab, find, "document.querySelector("+string(sel)+") !== null"); err != nil {
		return err
	}
	var js string
	switch s.Action {
	case render.StepWait:
		return nil
	case render.StepClick:
		js = "(e => (e.click(), true))(document.querySelector(" + string(sel) + "))"
	case render.StepFill:
		val, _ := json.Marshal(s.Value)
		js = "(e => { e.focus(); e.value = " + string(val) + "; for (const t of ['input', 'change']) e.dispatchEvent(new Event(t, {bubbles: true})); return true })(document.querySelector(" + string(sel) + "))"
	default:
		return fmt.Errorf("unknown action (want fill, click or wait)")
	}
	if _, err := chromedp.Run(tab, chromedp.Evaluate[bool](js)); err != nil {
		return fmt.Errorf("the page refused it: %w", err)
	}
	return nil
}

// waitElement polls expr until it is true; an invalid selector fails at
// once, a missing element when find or the tab ends. A page navigating
// (a form submitted) has no context to evaluate in for a moment: that is
// "not yet".
func waitElement(tab, find context.Context, expr string) error {
	for {
		found, err := chromedp.Run(tab, chromedp.Evaluate[bool](expr))
		if err != nil && strings.Contains(err.Error(), "not a valid selector") {
			return fmt.Errorf("not a valid CSS selector")
		}
		if err == nil && found {
			return nil
		}
		if find.Err() != nil {
			return fmt.Errorf("no element matches within %v", stepFind)
		}
		if err := sleep(tab, pollEvery); err != nil {
			return fmt.Errorf("no element matched before the page's timeout: %w", err)
		}
	}
}
