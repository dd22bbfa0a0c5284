package server_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/gorilla/websocket"

	"github.com/bunting-flags/bunting/sql/dbtest"
	"github.com/bunting-flags/bunting/sql/eval"
	"github.com/bunting-flags/bunting/sql/store/core"
	"github.com/bunting-flags/bunting/sql/store/flagstore"
	"github.com/bunting-flags/bunting/sql/store/segments"
	"github.com/bunting-flags/bunting/sql/targeting"
	"github.com/bunting-flags/bunting/web/sdk"
	"github.com/bunting-flags/bunting/web/sdk/sdktest"
)

// TestRelayProcess runs `bunting relay` as a process against a Bunting
// serving as a process (`bunting serve`, over the test's database): FeatBit's
// real SDK clients connected to the relay get their flags and changes; with
// the upstream killed the relay keeps serving and a change made meanwhile
// reaches its SDKs once the upstream is back; a relay restarted while the
// upstream is away serves from its snapshot file; a bad key stops it.
func TestRelayProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs bunting twice")
	}
	exe := buildBunting(t)
	// Processes belong to the whole test, not to the subtest that starts
	// them (a subtest's cleanup would kill them when it ends).
	top := t
	pool := dbtest.New(t, core.ConfigurePool)
	s := newSiteOver(t, pool)
	dbURL := pool.Config().ConnString()
	upAddr := freeLoopback(t)
	upstream := "http://" + upAddr
	up := startProcess(t, exe, "upstream", []string{"serve"}, map[string]string{
		"BUNTING_ADDR": upAddr, "BUNTING_DATABASE_URL": dbURL, "BUNTING_SECRET_KEY": strings.Repeat("test-secret-", 4),
		"BUNTING_ADMIN_EMAIL": ownerEmail, "BUNTING_PASSWORD_COST": "4"})
	waitStatus(t, upstream+"/health/readiness", "")

	prod := s.project("relayed")
	fx := s.relayFixture(prod.ID)
	rpID, key := createRelayProxy(t, upstream, s.owner, prod.ID)
	snapshot := filepath.Join(t.TempDir(), "relay", "snapshot.json")
	relayAddr := freeLoopback(t)
	relayURL := "http://" + relayAddr
	relayEnv := map[string]string{"BUNTING_ADDR": relayAddr, "BUNTING_RELAY_UPSTREAM": upstream, "BUNTING_RELAY_KEY": key,
		"BUNTING_RELAY_SNAPSHOT": snapshot, "BUNTING_RELAY_AGENT_ID": "relay-test"}
	relay := startProcess(t, exe, "relay", []string{"relay"}, relayEnv)
	waitStatus(t, relayURL+"/health/readiness", "Healthy")

	server, client := secretOf(prod, core.SecretServer), secretOf(prod, core.SecretClient)
	t.Run("FeatBit SDKs through the relay", func(t *testing.T) {
		runNodeClients(t, relayURL, upstream, s.owner, prod, fx)
	})

	t.Run("the admin routes want the key", func(t *testing.T) {
		if code, _ := relayGet(t, relayURL+"/api/public/proxy/status", "rp-not-the-key"); code != http.StatusUnauthorized {
			t.Fatalf("status with another key: %d, want 401", code)
		}
		code, body := relayGet(t, relayURL+"/api/public/proxy/backup", key)
		if code != http.StatusOK || !strings.Contains(body, `"eventType":"rp_full"`) || !strings.Contains(body, server) {
			t.Fatalf("backup: %d %.300s", code, body)
		}
	})

	// An SDK stays connected to the relay while the upstream goes.
	ws := dialRelay(t, relayURL, server)
	up.kill()
	waitProxyState(t, relayURL, key, "Interrupted")
	if code, body := relayGet(t, relayURL+"/health/readiness", ""); code != http.StatusOK || body != "Degraded" {
		t.Fatalf("readiness with the upstream away: %d %q, want 200 Degraded", code, body)
	}
	if f := latestFlag(t, relayURL, server, "ft-target"); !f.IsEnabled || len(f.TargetUsers) != 1 {
		t.Fatalf("the relay serves ft-target as %+v with the upstream away", f)
	}
	// A change made while the upstream is away reaches the SDK once it is back.
	_, err := s.st.Flags().ToggleFlag(context.Background(), s.ownerActor(), prod.ID, "ft-off", true, flagstore.Change{})
	must(t, err)
	up = startProcess(t, exe, "upstream", []string{"serve"}, up.env)
	waitStatus(t, upstream+"/health/readiness", "")
	if f := awaitPatch(t, ws, "ft-off"); !f.IsEnabled {
		t.Fatalf("the change made while the upstream was away arrived as %+v", f)
	}
	waitProxyState(t, relayURL, key, "Stable")
	if f := latestFlag(t, relayURL, server, "ft-off"); !f.IsEnabled {
		t.Fatal("the relay's polling answer misses the change caught up")
	}

	t.Run("a restarted relay serves its snapshot before the upstream answers", func(t *testing.T) {
		// The snapshot is written within a second of a change; wait until
		// it holds the last one.
		eventually(t, "the snapshot file holds ft-off on", func() bool {
			b, err := os.ReadFile(snapshot)
			return err == nil && snapshotHas(b, "ft-off", true)
		})
		up.kill()
		relay.kill()
		relay = startProcess(top, exe, "relay", []string{"relay"}, relayEnv)
		waitStatus(t, relayURL+"/health/readiness", "Degraded")
		if f := latestFlag(t, relayURL, server, "ft-off"); !f.IsEnabled {
			t.Fatal("the restarted relay serves ft-off as before the change")
		}
		code, body := relayPost(t, relayURL+"/api/public/sdk/client/latest-all", client, `{"keyId":"u-seg","name":"Ann","customizedProperties":[]}`)
		if code != http.StatusOK || !strings.Contains(body, `"id":"ft-seg"`) {
			t.Fatalf("client polling from the snapshot: %d %.300s", code, body)
		}
		up = startProcess(top, exe, "upstream", []string{"serve"}, up.env)
		waitStatus(t, relayURL+"/health/readiness", "Healthy")
	})

	t.Run("a change of scope reaches the relay", func(t *testing.T) {
		other := s.project("relayed-two")
		_, err := s.st.Flags().CreateFlag(context.Background(), s.ownerActor(), other.ID,
			decode[flagstore.FlagInput](t, map[string]any{"name": "other", "key": "other-flag", "isEnabled": true}))
		must(t, err)
		held := dialRelay(t, relayURL, server)
		body, _ := json.Marshal(map[string]any{"name": "edge", "description": "", "isAllEnvs": false,
			"scopes": []string{other.ID.String()}, "agents": []any{}, "autoAgents": []any{}})
		if code, answer := relayDo(t, "PUT", upstream+"/api/v1/relay-proxies/"+rpID, s.owner, string(body)); code != http.StatusOK {
			t.Fatalf("change the scope: %d %.300s", code, answer)
		}
		// The first environment's secret no longer opens anything: its
		// stream is closed as FeatBit closes a removed secret's.
		held.SetReadDeadline(time.Now().Add(60 * time.Second))
		for {
			_, _, err := held.ReadMessage()
			if err == nil {
				continue
			}
			if !websocket.IsCloseError(err, 4003) {
				t.Fatalf("the stream of an environment left out of the scope ended with %v, want 4003", err)
			}
			break
		}
		if f := latestFlag(t, relayURL, secretOf(other, core.SecretServer), "other-flag"); !f.IsEnabled {
			t.Fatal("the environment added to the scope is not served")
		}
	})

	t.Run("a key the upstream does not know stops the relay's sync", func(t *testing.T) {
		addr := freeLoopback(t)
		env := maps.Clone(relayEnv)
		env["BUNTING_ADDR"], env["BUNTING_RELAY_KEY"], env["BUNTING_RELAY_SNAPSHOT"] = addr, "rp-"+strings.Repeat("x", 40), ""
		startProcess(top, exe, "bad-relay", []string{"relay"}, env)
		waitProxyState(t, "http://"+addr, env["BUNTING_RELAY_KEY"], "Stopped")
		if code, _ := relayGet(t, "http://"+addr+"/health/readiness", ""); code != http.StatusServiceUnavailable {
			t.Fatalf("readiness of a relay with no data: %d, want 503", code)
		}
	})
}

// buildBunting builds cmd/bunting once for the test.
func buildBunting(t *testing.T) string {
	t.Helper()
	exe := filepath.Join(t.TempDir(), "bunting")
	out, err := exec.Command("go", "build", "-o", exe, "../../bunting").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return exe
}

func freeLoopback(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	defer l.Close()
	return l.Addr().String()
}

// process is a bunting process the test started; its output goes to the
// test's log when the test fails.
type process struct {
	t      *testing.T
	cmd    *exec.Cmd
	env    map[string]string
	done   chan struct{}
	output *bytes.Buffer
}

func startProcess(t *testing.T, exe, name string, args []string, env map[string]string) *process {
	t.Helper()
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), "BUNTING_METRICS_ADDR=off", "BUNTING_LOG_LEVEL=warn")
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	p := &process{t: t, cmd: cmd, env: env, done: make(chan struct{}), output: &bytes.Buffer{}}
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	must(t, cmd.Start())
	lines := make(chan struct{})
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			p.output.WriteString(name + ": " + sc.Text() + "\n")
		}
	}()
	go func() {
		cmd.Wait()
		pw.Close()
		<-lines
		close(p.done)
	}()
	t.Cleanup(func() {
		p.kill()
		if t.Failed() {
			t.Logf("%s", p.output.String())
		}
	})
	return p
}

// kill ends the process at once (SIGKILL: no goodbye to its peers) and
// waits for it.
func (p *process) kill() {
	select {
	case <-p.done:
		return
	default:
	}
	p.cmd.Process.Kill()
	<-p.done
}

// eventually waits until ok holds, checking every 20 ms, for 60 s at most.
func eventually(t *testing.T, what string, ok func() bool) {
	t.Helper()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(60 * time.Second)
	for !ok() {
		select {
		case <-tick.C:
		case <-deadline:
			t.Fatalf("waited 60 s for %s", what)
		}
	}
}

// waitStatus waits until url answers 200 (with body want, when set).
func waitStatus(t *testing.T, url, want string) {
	t.Helper()
	eventually(t, url+" to answer 200 "+want, func() bool {
		code, body := relayGet(t, url, "")
		return code == http.StatusOK && (want == "" || body == want)
	})
}

func relayGet(t *testing.T, url, auth string) (int, string) {
	t.Helper()
	return relayDo(t, "GET", url, auth, "")
}

func relayPost(t *testing.T, url, auth, body string) (int, string) {
	t.Helper()
	return relayDo(t, "POST", url, auth, body)
}

func relayDo(t *testing.T, method, url, auth, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	must(t, err)
	req.Header.Set("Content-Type", "application/json")
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	client := http.Client{Timeout: 10 * time.Second}
	res, err := client.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// waitProxyState waits until the relay's status says state.
func waitProxyState(t *testing.T, relayURL, key, state string) {
	t.Helper()
	eventually(t, "the relay's sync state "+state, func() bool {
		code, body := relayGet(t, relayURL+"/api/public/proxy/status", key)
		var st struct {
			SyncState string `json:"syncState"`
		}
		return code == http.StatusOK && json.Unmarshal([]byte(body), &st) == nil && st.SyncState == state
	})
}

// createRelayProxy makes a relay proxy of one environment through FeatBit's
// management route and returns its key.
func createRelayProxy(t *testing.T, upstream, owner string, envID uuid.UUID) (id, key string) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"name": "edge", "description": "", "isAllEnvs": false,
		"scopes": []string{envID.String()}, "agents": []any{}})
	code, answer := relayPost(t, upstream+"/api/v1/relay-proxies", owner, string(body))
	var out struct {
		Data struct {
			ID  string `json:"id"`
			Key string `json:"key"`
		} `json:"data"`
	}
	if code != http.StatusOK || json.Unmarshal([]byte(answer), &out) != nil || !strings.HasPrefix(out.Data.Key, "rp-") {
		t.Fatalf("create a relay proxy: %d %.300s", code, answer)
	}
	return out.Data.ID, out.Data.Key
}

func secretOf(env core.Environment, typ string) string {
	for _, s := range env.Secrets {
		if s.Type == typ {
			return s.Value
		}
	}
	panic("no " + typ + " secret")
}

// latestFlag is a flag of the relay's server polling answer.
func latestFlag(t *testing.T, relayURL, secret, key string) flagstore.Flag {
	t.Helper()
	code, body := relayGet(t, relayURL+"/api/public/sdk/server/latest-all?timestamp=0", secret)
	var m struct {
		Data struct {
			FeatureFlags []flagstore.Flag `json:"featureFlags"`
		} `json:"data"`
	}
	if code != http.StatusOK || json.Unmarshal([]byte(body), &m) != nil {
		t.Fatalf("server latest-all from the relay: %d %.300s", code, body)
	}
	for _, f := range m.Data.FeatureFlags {
		if f.Key == key {
			return f
		}
	}
	t.Fatalf("the relay does not serve %s", key)
	return flagstore.Flag{}
}

// snapshotHas reports whether a snapshot file holds the flag key enabled (on).
func snapshotHas(b []byte, key string, on bool) bool {
	var ds struct {
		Items []struct {
			FeatureFlags []flagstore.Flag `json:"featureFlags"`
		} `json:"items"`
	}
	if json.Unmarshal(b, &ds) != nil {
		return false
	}
	for _, it := range ds.Items {
		for _, f := range it.FeatureFlags {
			if f.Key == key {
				return f.IsEnabled == on
			}
		}
	}
	return false
}

// dialRelay opens a server SDK's stream to the relay and reads its full
// data-sync.
func dialRelay(t *testing.T, relayURL, secret string) *websocket.Conn {
	t.Helper()
	u := "ws" + strings.TrimPrefix(relayURL, "http") + "/streaming?type=server&token=" + url.QueryEscape(sdk.Token(secret, time.Now(), 10))
	ws, _, err := websocket.DefaultDialer.Dial(u, nil)
	must(t, err)
	t.Cleanup(func() { ws.Close() })
	must(t, ws.WriteMessage(websocket.TextMessage, []byte(`{"messageType":"data-sync","data":{"timestamp":0}}`)))
	ws.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, msg, err := ws.ReadMessage()
	if err != nil || !bytes.Contains(msg, []byte(`"eventType":"full"`)) {
		t.Fatalf("the relay's full data-sync: %v %.200s", err, msg)
	}
	ws.SetReadDeadline(time.Time{})
	return ws
}

// awaitPatch reads the stream until a patch holds the flag key.
func awaitPatch(t *testing.T, ws *websocket.Conn, key string) flagstore.Flag {
	t.Helper()
	ws.SetReadDeadline(time.Now().Add(90 * time.Second))
	defer ws.SetReadDeadline(time.Time{})
	for {
		_, msg, err := ws.ReadMessage()
		if err != nil {
			t.Fatalf("waiting for a patch of %s: %v", key, err)
		}
		var m struct {
			Data struct {
				EventType    string           `json:"eventType"`
				FeatureFlags []flagstore.Flag `json:"featureFlags"`
			} `json:"data"`
		}
		if json.Unmarshal(msg, &m) != nil || m.Data.EventType != "patch" {
			continue
		}
		for _, f := range m.Data.FeatureFlags {
			if f.Key == key {
				return f
			}
		}
	}
}

// relayFixture makes the flags web/sdk's node scripts evaluate (see
// web/sdk's seed): every kind of targeting.
func (s *site) relayFixture(envID uuid.UUID) map[string]flagstore.Flag {
	s.t.Helper()
	ctx, owner := context.Background(), s.ownerActor()
	sg, err := s.st.Segments().CreateSegment(ctx, owner, envID, decode[segments.SegmentInput](s.t, map[string]any{
		"name": "Seg", "key": "seg", "type": "environment-specific", "included": []string{"u-seg"}}))
	must(s.t, err)
	flags := map[string]flagstore.Flag{}
	create := func(key string, extra map[string]any) flagstore.Flag {
		body := map[string]any{"name": key, "key": key, "isEnabled": key != "ft-off"}
		maps.Copy(body, extra)
		f, err := s.st.Flags().CreateFlag(ctx, owner, envID, decode[flagstore.FlagInput](s.t, body))
		must(s.t, err)
		flags[key] = f
		return f
	}
	target := func(key string, tg map[string]any) {
		f := flags[key]
		whole := map[string]any{"targetUsers": f.TargetUsers, "rules": f.Rules, "fallthrough": f.Fallthrough}
		maps.Copy(whole, tg)
		_, err := s.st.Flags().SetFlagTargeting(ctx, owner, envID, key, decode[flagstore.TargetingInput](s.t, map[string]any{"targeting": whole}))
		must(s.t, err)
		flags[key], err = s.st.Flags().GetFlag(ctx, owner, envID, key)
		must(s.t, err)
	}
	vid := func(key, value string) string {
		for _, v := range flags[key].Variations {
			if v.Value == value {
				return v.ID
			}
		}
		panic("no variation " + value)
	}
	rollout := func(id string, lo, hi float64) map[string]any {
		return map[string]any{"id": id, "rollout": []float64{lo, hi}, "exptRollout": 1}
	}
	rule := func(name string, cond map[string]any, variation string) []map[string]any {
		return []map[string]any{{"id": uuid.NewString(), "name": name, "includedInExpt": true,
			"conditions": []map[string]any{cond}, "variations": []any{rollout(variation, 0, 1)}}}
	}
	for _, key := range []string{"ft-bool", "ft-off", "ft-target", "ft-rule", "ft-seg", "ft-split"} {
		create(key, nil)
	}
	target("ft-target", map[string]any{"targetUsers": []map[string]any{{"keyIds": []string{"u-false"}, "variationId": vid("ft-target", "false")}}})
	target("ft-rule", map[string]any{"rules": rule("China and US",
		map[string]any{"id": uuid.NewString(), "property": "country", "op": "IsOneOf", "value": `["cn","us"]`}, vid("ft-rule", "false"))})
	target("ft-seg", map[string]any{"rules": rule("In segment",
		map[string]any{"id": uuid.NewString(), "property": targeting.SegmentIn, "op": "", "value": fmt.Sprintf(`[%q]`, sg.ID)}, vid("ft-seg", "false"))})
	target("ft-split", map[string]any{"fallthrough": map[string]any{"dispatchKey": nil, "includedInExpt": true,
		"variations": []any{rollout(vid("ft-split", "true"), 0, 0.5), rollout(vid("ft-split", "false"), 0.5, 1)}}})
	create("ft-string", map[string]any{"variationType": "string", "variations": []map[string]string{
		{"id": "s1", "name": "Blue", "value": "blue"}, {"id": "s2", "name": "Green", "value": "green"}}})
	create("ft-number", map[string]any{"variationType": "number", "variations": []map[string]string{
		{"id": "n1", "name": "Ten", "value": "10"}, {"id": "n2", "name": "Pi", "value": "3.5"}}})
	create("ft-json", map[string]any{"variationType": "json", "variations": []map[string]string{
		{"id": "j1", "name": "Config", "value": `{"limit":5,"tags":["a"]}`}, {"id": "j2", "name": "Empty", "value": "{}"}}})
	return flags
}

func decode[T any](t *testing.T, body map[string]any) T {
	t.Helper()
	b, err := json.Marshal(body)
	must(t, err)
	var v T
	must(t, json.Unmarshal(b, &v))
	return v
}

// runNodeClients runs web/sdk's scripts of FeatBit's npm SDKs with the
// relay as their streaming, polling and events URL and the upstream as the
// management API's: flags evaluated, a change pushed, events counted
// upstream. Skipped without node and the installed packages, except under
// CI=true.
func runNodeClients(t *testing.T, relayURL, upstream, owner string, env core.Environment, flags map[string]flagstore.Flag) {
	nodeDir := filepath.Join("..", "..", "..", "web", "sdk", "testdata", "node")
	node := sdktest.Node(t, nodeDir)
	users := make([]string, 20)
	for i := range users {
		users[i] = fmt.Sprint("user-", i)
	}
	// client-sdk.js turns ft-bool off, server-sdk.js expects it on first.
	for _, script := range []string{"server-sdk", "client-sdk"} {
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		cmd := exec.CommandContext(ctx, node, script+".js")
		cmd.Dir = nodeDir
		cmd.Env = append(os.Environ(), "BUNTING_URL="+relayURL, "API_URL="+upstream, "SERVER_SECRET="+secretOf(env, core.SecretServer),
			"CLIENT_SECRET="+secretOf(env, core.SecretClient), "UNKNOWN_SECRET="+core.NewSecretValue(env.ID), "API_AUTH="+owner,
			"ENV_ID="+env.ID.String(), "SPLIT_USERS="+strings.Join(users, ","))
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		cancel()
		if err != nil {
			t.Fatalf("node %s.js through the relay: %v\n%s%s", script, err, out, stderr.String())
		}
		t.Logf("%s: %s", script, bytes.TrimSpace(out))
		if script == "server-sdk" {
			var res struct{ Split []bool }
			for line := range strings.Lines(string(out)) {
				if rest, ok := strings.CutPrefix(line, "RESULT "); ok {
					must(t, json.Unmarshal([]byte(rest), &res))
				}
			}
			split := flags["ft-split"]
			want := make([]bool, len(users))
			for i, k := range users {
				want[i] = eval.Evaluate(&split, eval.EndUser{KeyID: k}, nil).Variation.Value == "true"
			}
			if !slices.Equal(res.Split, want) {
				t.Errorf("the relay split users %v, the evaluator %v", res.Split, want)
			}
			// Back on for the client script, which turns it off itself.
			code, body := relayDo(t, "PUT", upstream+"/api/v1/envs/"+env.ID.String()+"/feature-flags/ft-bool/toggle/true", owner, "{}")
			if code != http.StatusOK {
				t.Fatalf("turn ft-bool back on: %d %.200s", code, body)
			}
		}
	}
}
