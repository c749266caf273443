package main

import (
	"fmt"
	"os"
	"regexp"
	"strings"

	"github.com/urfave/cli/v2"
	"github.com/xrash/smetrics"

	"github.com/distscrape/distscrape/internal/app/config"
)

// Usage errors are one line on stderr and exit 2: a mistyped flag should
// not scroll the screen with the whole help (urfave/cli's default).

// similar is the Jaro-Winkler score above which a name is offered as a
// did-you-mean: "crawwl" → crawl scores 0.97, "concurrency" → config 0.70.
const similar = 0.85

// closest returns the candidate most like name, or "" when none is similar.
func closest(name string, candidates []string) string {
	best, bestScore := "", similar
	for _, c := range candidates {
		if s := smetrics.JaroWinkler(name, c, 0.7, 4); s >= bestScore {
			best, bestScore = c, s
		}
	}
	return best
}

var undefinedFlagRE = regexp.MustCompile(`^flag provided but not defined: -+(.+)$`)

// commandUsageError turns a subcommand's flag-parsing error into one line
// naming the flag, with a hint: a config key given as a flag, or a
// did-you-mean among the command's flags.
// The same function serves the app's own flags (distscrape --bogus).
func commandUsageError(c *cli.Context, err error, _ bool) error {
	prefix, help, flags := "", "see distscrape --help", c.App.Flags
	if cmd := c.Command; cmd != nil && cmd.Name != "" && cmd.Name != c.App.Name {
		prefix, help, flags = cmd.Name+": ", fmt.Sprintf("see distscrape %s --help", cmd.Name), cmd.Flags
	}
	m := undefinedFlagRE.FindStringSubmatch(err.Error())
	if m == nil {
		return usagef("%s%v (%s)", prefix, err, help)
	}
	flag := m[1]
	if keys := configKeysNamed(flag); len(keys) > 0 {
		return usagef("%sunknown flag --%s; %s (%s)", prefix, flag, keys, help)
	}
	var names []string
	for _, f := range append(flags, cli.HelpFlag) {
		names = append(names, f.Names()...)
	}
	if s := closest(flag, names); s != "" {
		return usagef("%sunknown flag --%s; did you mean --%s? (%s)", prefix, flag, s, help)
	}
	return usagef("%sunknown flag --%s (%s)", prefix, flag, help)
}

// configKeysNamed says how to set the config keys a mistaken flag names
// (--concurrency, --max-depth): in the file, or with their variable.
func configKeysNamed(flag string) string {
	leaf := strings.ReplaceAll(strings.ToLower(flag), "-", "_")
	var hints []string
	for _, pair := range config.EnvVars() {
		env, path := pair[0], pair[1]
		if path == leaf || strings.HasSuffix(path, "."+leaf) {
			hints = append(hints, fmt.Sprintf("%s (or %s=...)", path, env))
		}
	}
	if len(hints) == 0 {
		return ""
	}
	return "that is a config key, set in the config file: " + strings.Join(hints, ", ")
}

// commandNotFound exits 2 with a did-you-mean among the commands.
func commandNotFound(c *cli.Context, name string) {
	var names []string
	for _, cmd := range c.App.Commands {
		names = append(names, cmd.Names()...)
	}
	if s := closest(name, names); s != "" {
		fmt.Fprintf(os.Stderr, "distscrape: unknown command %q; did you mean %s? (see distscrape --help)\n", name, s)
	} else {
		fmt.Fprintf(os.Stderr, "distscrape: unknown command %q (see distscrape --help)\n", name)
	}
	os.Exit(exitUsage)
}
