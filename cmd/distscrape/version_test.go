package main

import (
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

// TestDescribeBuild: the version says which module version and which
// commit the binary was built from, whichever way it was built.
func TestDescribeBuild(t *testing.T) {
	vcs := func(kv ...string) []debug.BuildSetting {
		var out []debug.BuildSetting
		for i := 0; i+1 < len(kv); i += 2 {
			out = append(out, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return out
	}
	rev := "3d6c398b740a4ff7995fd23ac7890be36e2002b9"
	goTail := runtime.Version() + ", " + runtime.GOOS + "/" + runtime.GOARCH + ")"
	cases := []struct {
		name, ldflags string
		bi            *debug.BuildInfo
		want          string
	}{
		{"go install @version", "dev", &debug.BuildInfo{Main: debug.Module{Version: "v1.2.0"}},
			"v1.2.0 (" + goTail},
		{"go build in a clone", "dev", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"},
			Settings: vcs("vcs", "git", "vcs.revision", rev, "vcs.time", "2026-11-24T23:49:34Z", "vcs.modified", "false")},
			"(devel) (commit 3d6c398b740a 2026-11-24T23:49:34Z, " + goTail},
		{"uncommitted changes", "dev", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"},
			Settings: vcs("vcs.revision", rev, "vcs.modified", "true")},
			"(devel) (commit 3d6c398b740a, modified, " + goTail},
		{"pseudo-version with stamp", "dev", &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261124234934-3d6c398b740a"},
			Settings: vcs("vcs.revision", rev)},
			"v0.0.0-20261124234934-3d6c398b740a (commit 3d6c398b740a, " + goTail},
		{"ldflags win", "v9.9.9", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "v9.9.9 (" + goTail},
		{"no build info", "dev", nil, "dev (" + goTail},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := describeBuild(tc.ldflags, tc.bi); got != tc.want {
				t.Fatalf("got  %q\nwant %q", got, tc.want)
			}
			if strings.Contains(describeBuild(tc.ldflags, tc.bi), "\n") {
				t.Fatal("more than one line")
			}
		})
	}
}
