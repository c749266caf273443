package fixturesite

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

func fetchBody(t *testing.T, u string) (*http.Response, string) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

// TestJSPages: the browser pages hold no content a plain fetch could
// read; the scroll list's batches add up to JSScrollItems; the hostile
// page carries its targets as JSON.
func TestJSPages(t *testing.T) {
	s := Start(t, Options{Pages: 3})
	if _, body := fetchBody(t, s.URL()+JSLatePath); strings.Contains(body, `<p id="late">`) || !strings.Contains(body, "setTimeout") {
		t.Errorf("late page: %s", body)
	}
	total := 0
	for batch := 0; ; batch++ {
		_, body := fetchBody(t, s.URL()+jsItemsPath+"?batch="+strconv.Itoa(batch))
		var items []int
		if err := json.Unmarshal([]byte(body), &items); err != nil {
			t.Fatalf("batch %d: %v: %s", batch, err, body)
		}
		if len(items) == 0 {
			break
		}
		total += len(items)
		if batch > JSScrollItems/JSScrollBatch {
			t.Fatal("the list never ends")
		}
	}
	if total != JSScrollItems {
		t.Errorf("%d items, want %d", total, JSScrollItems)
	}
	if _, body := fetchBody(t, s.URL()+JSHostilePath+"?to=http://169.254.169.254/%3C/script%3E"); !strings.Contains(body, `["http://169.254.169.254/\u003c/script\u003e"]`) {
		t.Errorf("hostile page does not carry its target escaped: %s", body)
	}
	if resp, body := fetchBody(t, s.URL()+JSManyPath+"?n=3"); resp.StatusCode != 200 || strings.Count(body, "<img") != 3 {
		t.Errorf("many: %d %s", resp.StatusCode, body)
	}
	if resp, _ := fetchBody(t, s.URL()+JSImagePrefix+"2.png"); resp.Header.Get("Content-Type") != "image/png" {
		t.Error("image type")
	}
	if u := s.Unexpected(); len(u) != 0 {
		t.Errorf("unexpected paths: %v", u)
	}
}

// TestGate: /js/gate/wait holds until OpenGate, then answers its script;
// a client that gives up first gets nothing and the handler returns.
func TestGate(t *testing.T) {
	site := Start(t, Options{})
	c := &http.Client{Timeout: 200 * time.Millisecond}
	if _, err := c.Get(site.URL() + JSGateWaitPath); err == nil {
		t.Fatal("the closed gate answered")
	}
	site.OpenGate()
	site.OpenGate() // twice is fine
	resp, err := http.Get(site.URL() + JSGateWaitPath)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(b), "gateOpen = true") {
		t.Errorf("the open gate answered %q", b)
	}
	resp, err = http.Get(site.URL() + JSGatePath)
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(b), JSGateText) || !strings.Contains(string(b), JSGateWaitPath) {
		t.Errorf("the gate page: %s", b)
	}
}
