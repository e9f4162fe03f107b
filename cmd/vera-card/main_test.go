package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image/png"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/veraneural/vera-gateway/devices"
)

const assessment = `{"level":"crisis","display_required":true,"resources":[
 {"id":"us-988","name":"988 Suicide & Crisis Lifeline","description":"Free, confidential support, 24/7.",
  "actions":[{"type":"call","value":"988"},{"type":"text","value":"988"}]},
 {"id":"uk-samaritans","name":"Samaritans","actions":[{"type":"call","value":"116 123"}]},
 {"id":"au-lifeline","name":"Lifeline Australia","actions":[{"type":"call","value":"13 11 14"}]}]}`

type opsFile struct {
	Device string `json:"device"`
	Pages  []struct {
		N     int      `json:"n"`
		Of    int      `json:"of"`
		Title string   `json:"title"`
		Lines []string `json:"lines"`
	} `json:"pages"`
}

func runCmd(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(args, &out, &errb)
	return code, out.String(), errb.String()
}

func write(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// checkOut verifies page-N.png files and ops.json agree with the printed count.
func checkOut(t *testing.T, dir, device, stdout string) opsFile {
	t.Helper()
	n, err := strconv.Atoi(strings.TrimSpace(stdout))
	if err != nil || n < 1 {
		t.Fatalf("stdout %q is not a page count", stdout)
	}
	b, err := os.ReadFile(filepath.Join(dir, "ops.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ops opsFile
	if err := json.Unmarshal(b, &ops); err != nil {
		t.Fatal(err)
	}
	if ops.Device != device || len(ops.Pages) != n {
		t.Fatalf("ops.json device %q pages %d, printed %d", ops.Device, len(ops.Pages), n)
	}
	p, _ := devices.Lookup(device)
	s, _ := p.Display()
	for i, pg := range ops.Pages {
		if pg.N != i+1 || pg.Of != n || pg.Title == "" || len(pg.Lines) == 0 {
			t.Fatalf("page %d: %+v", i+1, pg)
		}
		f, err := os.Open(filepath.Join(dir, fmt.Sprintf("page-%d.png", i+1)))
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		if img.Bounds().Dx() != s.Width || img.Bounds().Dy() != s.Height {
			t.Fatalf("page %d is %v, want %dx%d", i+1, img.Bounds(), s.Width, s.Height)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, fmt.Sprintf("page-%d.png", n+1))); err == nil {
		t.Fatalf("extra page-%d.png", n+1)
	}
	return ops
}

func TestSafetyAssessment(t *testing.T) {
	in := write(t, "a.json", assessment)
	dir := t.TempDir()
	code, out, errs := runCmd(t, "-device", devices.MetaRayBanDisplay, "-safety", in, "-out", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	ops := checkOut(t, dir, devices.MetaRayBanDisplay, out)
	if len(ops.Pages) != 3 || ops.Pages[1].Lines[0] != "Samaritans" || ops.Pages[2].Lines[1] != "Call 13 11 14" {
		t.Fatalf("pages: %+v", ops.Pages)
	}
}

func TestCardFile(t *testing.T) {
	in := write(t, "c.json", `{"kind":"action","title":"Send message to Sam?","body":"Running late.",
	 "actions":[{"id":"send","label":"Send","role":"commit"},{"id":"keep","label":"Don't send","role":"decline"}]}`)
	dir := t.TempDir()
	code, out, errs := runCmd(t, "-device", devices.EvenG1, "-card", in, "-out", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	ops := checkOut(t, dir, devices.EvenG1, out)
	if !strings.Contains(strings.Join(ops.Pages[len(ops.Pages)-1].Lines, " "), `Say "send" or "don't send".`) {
		t.Fatalf("g1 prompt lines %+v", ops.Pages)
	}
}

// The embedded catalog renders on every profile with a display.
func TestCatalogEveryProfile(t *testing.T) {
	for _, id := range devices.IDs() {
		dir := t.TempDir()
		code, out, errs := runCmd(t, "-device", id, "-catalog", "-out", dir)
		if id == devices.VoiceOnly {
			if code == 0 || !strings.Contains(errs, "no display") {
				t.Fatalf("voice-only: exit %d %q", code, errs)
			}
			continue
		}
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", id, code, errs)
		}
		checkOut(t, dir, id, out)
	}
}

func TestErrors(t *testing.T) {
	emoji := write(t, "e.json", `{"level":"crisis","display_required":true,"resources":[{"id":"x","name":"Help 💚","actions":[{"type":"call","value":"988"}]}]}`)
	empty := write(t, "empty.json", `{"level":"crisis","display_required":true,"resources":[]}`)
	badLevel := write(t, "l.json", `{"level":"severe","resources":[{"id":"x","name":"X","actions":[]}]}`)
	unknownField := write(t, "u.json", `{"kind":"info","title":"t","body":"b","colour":"red"}`)
	dir := t.TempDir()
	tests := []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"-device", "hololens", "-catalog", "-out", dir}, 1, "meta-rayban-display"},
		{[]string{"-device", devices.Phone, "-out", dir}, 2, "exactly one of"},
		{[]string{"-device", devices.Phone, "-catalog", "-card", emoji, "-out", dir}, 2, "exactly one of"},
		{[]string{"-device", devices.Phone, "-catalog"}, 2, "-out"},
		{[]string{"-device", devices.Phone, "-safety", emoji, "-out", dir}, 1, "U+1F49A"},
		{[]string{"-device", devices.Phone, "-safety", empty, "-out", dir}, 1, "never empty"},
		{[]string{"-device", devices.Phone, "-safety", badLevel, "-out", dir}, 1, "severe"},
		{[]string{"-device", devices.Phone, "-card", unknownField, "-out", dir}, 1, "colour"},
		{[]string{"-device", devices.Phone, "-safety", filepath.Join(dir, "missing.json"), "-out", dir}, 1, "missing.json"},
		{[]string{"-bogus"}, 2, "bogus"},
	}
	for _, tc := range tests {
		code, _, errs := runCmd(t, tc.args...)
		if code != tc.code || !strings.Contains(errs, tc.msg) {
			t.Errorf("%v: exit %d stderr %q, want %d containing %q", tc.args, code, errs, tc.code, tc.msg)
		}
	}
}

func TestListDevices(t *testing.T) {
	code, out, _ := runCmd(t, "-list-devices")
	if code != 0 {
		t.Fatal(code)
	}
	for _, id := range devices.IDs() {
		if !strings.Contains(out, id) {
			t.Errorf("-list-devices lacks %s", id)
		}
	}
}
