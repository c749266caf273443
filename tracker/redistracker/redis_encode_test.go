package redistracker

import (
	"regexp"
	"strconv"
	"testing"
)

// TestWireConstantsAgree reads lua/lib's named bytes and reply codes ("local TAG_RUN = 1 --
// Go: tagRun") and checks each against its Go twin, so the two sides of the
// wire format cannot drift apart.
func TestWireConstantsAgree(t *testing.T) {
	goSide := map[string]string{
		"tagRun": strconv.Itoa(tagRun), "tagRange": strconv.Itoa(tagRange), "tagItem": strconv.Itoa(tagItem),
		"tagHugeRange": strconv.Itoa(tagHugeRange), "tagMax": strconv.Itoa(tagMax),
		"tagExt": strconv.Itoa(tagExt), "tagNamed": strconv.Itoa(tagNamed),
		"tagRevisit":     strconv.Itoa(tagRevisit),
		"flagValidators": strconv.Itoa(flagValidators), "starveEvery": strconv.Itoa(starveEvery),
		"codeStateLost": codeStateLost,
		"checkoutDone":  strconv.Itoa(checkoutDone), "checkoutMore": strconv.Itoa(checkoutMore),
		"checkoutPaused": strconv.Itoa(checkoutPaused), "checkoutMaxPages": strconv.Itoa(checkoutMaxPages),
		"checkoutMaxBytes": strconv.Itoa(checkoutMaxBytes),
		"workerMemory":     strconv.Itoa(workerMemory), "tokenPrefixLen": strconv.Itoa(tokenPrefixLen), "groupSplit": strconv.Itoa(groupSplit),
		"sharedHeld": strconv.Itoa(sharedHeld), "sharedSet": strconv.Itoa(sharedSet), "sharedFull": strconv.Itoa(sharedFull),
		"maxDeadListed": strconv.Itoa(maxDeadListed),
	}
	lib, err := libSource()
	if err != nil {
		t.Fatal(err)
	}
	decl := regexp.MustCompile(`(?m)^local ([A-Z_]+) = ('[^']*'|\d+) +-- Go: (\w+)`)
	seen := map[string]bool{}
	for _, m := range decl.FindAllStringSubmatch(lib, -1) {
		luaName, luaVal, goName := m[1], m[2], m[3]
		want, ok := goSide[goName]
		if !ok {
			t.Errorf("lua/lib: %s names Go constant %s, which this test does not know", luaName, goName)
			continue
		}
		seen[goName] = true
		if luaVal[0] == '\'' {
			luaVal = luaVal[1 : len(luaVal)-1]
		}
		if luaVal != want {
			t.Errorf("lua/lib: %s = %s, but Go's %s = %s", luaName, luaVal, goName, want)
		}
	}
	for goName := range goSide {
		if !seen[goName] {
			t.Errorf("Go constant %s has no twin in lua/lib (local NAME = value -- Go: %s)", goName, goName)
		}
	}
}

// TestPendingEntryTags: the entries Go writes start with the tag lua/lib
// reads for them.
func TestPendingEntryTags(t *testing.T) {
	for _, c := range []struct {
		entry string
		tag   byte
	}{
		{pendingEntry("k", 2, 1), tagItem},
		{pendingEntry("\x01k", 0, 0), tagItem}, // a key that looks like a tag is never bare
		{rangeEntry(tagRange, 1, 5), tagRange},
		{rangeEntry(tagHugeRange, hugeID, hugeID+1), tagHugeRange},
	} {
		if c.entry[0] != c.tag {
			t.Errorf("entry %q starts with %d, want tag %d", c.entry, c.entry[0], c.tag)
		}
	}
	if e := pendingEntry("plain", 0, 0); e != "plain" {
		t.Errorf("pendingEntry(plain, 0, 0) = %q, want the bare key", e)
	}
}
