# Bunting: `make run` serves, `make test` runs every test. See README.md.

export BUNTING_ADMIN_EMAIL ?= admin@example.com
# A known first password so the curl session of api/README.md works on a
# fresh machine; it is used only when the database is empty. Set your own
# elsewhere.
export BUNTING_ADMIN_PASSWORD ?= bunting-admin

.PHONY: run test fuzz sdk-clients generate generate-check build featbit-ui

# run serves. With no BUNTING_DATABASE_URL and no server on 127.0.0.1:5432,
# Bunting starts a private PostgreSQL from the machine's binaries (see
# README); on a machine with none, run installs Debian's or Ubuntu's
# postgresql package first when it can (as root), and otherwise Bunting says
# what to install.
run:
	@if [ -z "$$BUNTING_DATABASE_URL" ] && ! ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1 \
	    && ! bash -c '</dev/tcp/127.0.0.1/5432' 2>/dev/null && [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		echo "make run: PostgreSQL is not installed; installing the postgresql package"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends postgresql >/dev/null; \
	fi
	go run ./cmd/bunting serve

build:
	go build -o bin/bunting ./cmd/bunting

# sdk-clients installs the npm SDK clients pinned in package-lock.json, which
# the SDK test drives; without npm that test skips (and fails under CI=true).
SDK_CLIENTS := web/sdk/testdata/node
sdk-clients:
	@if [ -d $(SDK_CLIENTS)/node_modules ]; then :; \
	elif command -v npm >/dev/null; then npm ci --prefix $(SDK_CLIENTS) --no-audit --no-fund; \
	else echo "npm not found: the SDK client test will be skipped"; fi

# test checks formatting, runs go vet and staticcheck (the version pinned in
# go.mod), every test, then the fuzz targets. It gives each package's tests
# 30 minutes, not go test's 10: the api and web packages take a few minutes
# on a quiet 2-core machine and 10 or more on a loaded one, and a timeout
# there says nothing about the code.
test: sdk-clients
	@unformatted="$$(gofmt -l $$(git ls-files '*.go'))"; \
	if [ -n "$$unformatted" ]; then echo "not gofmt-formatted:"; echo "$$unformatted"; exit 1; fi
	go vet ./...
	go tool staticcheck ./...
	go test -race -count=1 -timeout 30m ./...
	$(MAKE) --no-print-directory fuzz

# fuzz runs each fuzz target briefly beyond its committed seed corpus
# (testdata/fuzz): 100,000 inputs each, a fixed amount of work (a time
# limit can end a run while a worker is mid-input, which go test has
# reported as a failure, "context deadline exceeded", on a loaded machine);
# FUZZTIME=5m for a longer hunt.
FUZZTIME ?= 100000x
fuzz:
	go test -run '^$$' -fuzz '^FuzzMatchResource$$' -fuzztime $(FUZZTIME) ./sql/access
	go test -run '^$$' -fuzz '^FuzzApplyPatch$$' -fuzztime $(FUZZTIME) ./sql/store/flagstore
	go test -run '^$$' -fuzz '^FuzzTargetingValidation$$' -fuzztime $(FUZZTIME) ./sql/targeting
	go test -run '^$$' -fuzz '^FuzzBind$$' -fuzztime $(FUZZTIME) ./api
	go test -run '^$$' -fuzz '^FuzzDecode$$' -fuzztime $(FUZZTIME) ./sql/jsonbody

# featbit-ui builds FeatBit's own Angular admin UI from a FeatBit checkout
# (FEATBIT_SRC, unchanged, at the pinned commit; the build is cached outside
# the repository), points it at a Bunting on a fresh database and walks it in
# headless Chromium; FEATBIT_UI_FLAGS passes flags such as -record or -log.
# See cmd/featbit-ui/README.md.
featbit-ui:
	@if [ -z "$(FEATBIT_SRC)" ]; then echo "usage: make featbit-ui FEATBIT_SRC=/path/to/featbit"; exit 2; fi
	go run ./cmd/featbit-ui -featbit-src "$(FEATBIT_SRC)" $(FEATBIT_UI_FLAGS)

# generate regenerates sqlc and templ output with the tool versions pinned in
# go.mod. The client generated from api/openapi.yaml is not committed: its
# test (TestGeneratedClient, part of make test) generates it with the pinned
# oapi-codegen into a temporary package and runs it against a real server.
generate:
	go tool sqlc generate
	go tool sqlc vet
	go tool templ generate

# generate-check proves the committed generated code is what the pinned tools produce.
generate-check: generate
	go mod tidy
	@if [ -n "$$(git status --porcelain)" ]; then \
		echo "generated code or go.mod is out of date; run 'make generate' and commit:"; \
		git status --porcelain; git --no-pager diff --stat; exit 1; \
	fi
