package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/bunting-flags/bunting/sql/dbtest"
	"github.com/bunting-flags/bunting/sql/store/core"
)

// TestRefusedPolicyFormsCostNoMemory: a Developer (a member without
// CanManageIAM) posts the policy editor's check ten times at once, each a
// 100 KB form naming statement 0 4,990 times with as many actions, the
// form that made the editor build 24.9 million strings before the store
// said no. Every one is answered 403, and the real server process's peak
// resident memory stays within 200 MB of what it held idle: the right is
// checked before the form is read.
func TestRefusedPolicyFormsCostNoMemory(t *testing.T) {
	dbURL, _ := dbtest.NewDatabase(t)
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	// This test binary is Bunting itself when its first argument is serve (TestMain).
	cmd := exec.Command(os.Args[0], "serve")
	cmd.Env = append(os.Environ(), "BUNTING_ADDR="+addr, "BUNTING_DATABASE_URL="+dbURL, "BUNTING_LOG_LEVEL=error",
		"BUNTING_ADMIN_EMAIL=root@example.com", "BUNTING_ADMIN_PASSWORD=root-password", "BUNTING_PASSWORD_COST=4")
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(20 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
	})
	base := "http://" + addr
	waitReady(t, base)

	// The owner adds a Developer, who signs in to the pages.
	owner := signIn(t, base, "root@example.com", "root-password")
	body, _ := json.Marshal(map[string]any{"email": "dev@example.com", "policyIds": []string{core.DeveloperPolicyID.String()}})
	req, _ := http.NewRequest("POST", base+"/api/v1/members/add", bytes.NewReader(body))
	req.Header.Set("Authorization", owner)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	// The inviter reads the new member's initial password from the list.
	req, _ = http.NewRequest("GET", base+"/api/v1/members?searchText=dev", nil)
	req.Header.Set("Authorization", owner)
	if resp, err = http.DefaultClient.Do(req); err != nil {
		t.Fatal(err)
	}
	var members struct {
		Data core.Paged[struct {
			InitialPassword string `json:"initialPassword"`
		}] `json:"data"`
	}
	json.NewDecoder(resp.Body).Decode(&members)
	resp.Body.Close()
	if len(members.Data.Items) != 1 || members.Data.Items[0].InitialPassword == "" {
		t.Fatalf("listing the Developer answered %d with %+v, want their initial password", resp.StatusCode, members.Data)
	}
	password := members.Data.Items[0].InitialPassword
	dev := pageSignIn(t, base, "dev@example.com", password)
	token := dev.csrf(t, "/profile")

	// The attack: st=0 and st-0-actions=a, 4,990 times each (100 KB).
	form := "_csrf=" + url.QueryEscape(token) + "&" + strings.Repeat("st=0&", 4990) + strings.Repeat("st-0-actions=a&", 4990)
	idle := procStatus(t, cmd.Process.Pid, "VmRSS")
	check := base + "/policies/" + core.DeveloperPolicyID.String() + "/check"
	codes := make([]int, 10)
	var wg sync.WaitGroup
	for i := range codes {
		wg.Go(func() {
			req, _ := http.NewRequest("POST", check, strings.NewReader(form))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			resp, err := dev.client.Do(req)
			if err != nil {
				codes[i] = -1
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			codes[i] = resp.StatusCode
		})
	}
	wg.Wait()
	peak := procStatus(t, cmd.Process.Pid, "VmHWM")
	for i, code := range codes {
		if code != http.StatusForbidden {
			t.Errorf("check form %d answered %d, want 403", i, code)
		}
	}
	t.Logf("10 concurrent 100 KB policy-check forms from a Developer: idle RSS %d MB, peak RSS %d MB (+%d MB)",
		idle>>20, peak>>20, (peak-idle)>>20)
	if peak-idle > 200<<20 {
		t.Errorf("peak RSS %d MB is %d MB over idle %d MB, want at most 200 MB over", peak>>20, (peak-idle)>>20, idle>>20)
	}
	select {
	case err := <-exited:
		t.Fatalf("the server exited (%v):\n%s", err, log.String())
	default:
	}
}

// procStatus reads a memory figure of /proc/PID/status, in bytes.
func procStatus(t *testing.T, pid int, field string) int64 {
	t.Helper()
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		name, value, ok := strings.Cut(s.Text(), ":")
		if !ok || name != field {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(value), " kB"), 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		return kb << 10
	}
	t.Fatalf("no %s in /proc/%d/status", field, pid)
	return 0
}

// browser is a person using the pages: a cookie jar with their session.
type browser struct {
	base   string
	client *http.Client
}

var csrfField = regexp.MustCompile(`name="_csrf" value="([^"]+)"`)

// csrf returns the anti-forgery token of a page's forms.
func (b browser) csrf(t *testing.T, path string) string {
	t.Helper()
	resp, err := b.client.Get(b.base + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	page, _ := io.ReadAll(resp.Body)
	m := csrfField.FindSubmatch(page)
	if m == nil {
		t.Fatalf("GET %s answered %d with no form token", path, resp.StatusCode)
	}
	return strings.ReplaceAll(string(m[1]), "&#43;", "+")
}

// pageSignIn signs in through the sign-in page.
func pageSignIn(t *testing.T, base, email, password string) browser {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	b := browser{base: base, client: &http.Client{Jar: jar, Timeout: time.Minute,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	token := b.csrf(t, "/login")
	resp, err := b.client.PostForm(base+"/login", url.Values{"_csrf": {token}, "email": {email}, "password": {password}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("signing in answered %d, want 303", resp.StatusCode)
	}
	return b
}
