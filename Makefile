# vera-gateway. `make run` and `make test` are the whole set-up on a fresh machine.

GO          ?= go
TAGS        ?= nolibopusfile
GOTESTFLAGS ?=
TEST_TIMEOUT ?= 30m
FUZZTIME    ?= 20000x
BENCH       ?= .
BIN         := bin

export CGO_ENABLED := 1

.PHONY: all deps deps-test build run test vet bench fuzz vad-anchors clean

all: build

deps:
	@bash .ci/deps.sh

# What only the tests start (redis-server, coturn), on top of deps.
deps-test:
	@bash .ci/deps.sh test

build: deps
	$(GO) build -tags $(TAGS) -o $(BIN)/ ./cmd/...

run: deps
	$(GO) run -tags $(TAGS) ./cmd/vera-gateway $(ARGS)

vet:
	$(GO) vet -tags $(TAGS) ./...

test: deps-test vet
	$(GO) test -tags $(TAGS) -race -count=1 -timeout $(TEST_TIMEOUT) $(GOTESTFLAGS) ./...
	@# 50 live voice sessions at once (issue 6), on their own so no other
	@# package's tests share the two cores with them.
	VOICE_CONCURRENT=50 $(GO) test -tags $(TAGS) -race -count=1 -timeout 10m -run '^TestConcurrentSessions$$' ./gateway/voice/
	@# 30 talking sessions against the fake remote providers (issue 17),
	@# function only, alone for the same reason.
	VERA_TALKING_SESSIONS=30 $(GO) test -tags $(TAGS) -race -count=1 -timeout 10m -run '^TestTalkingLoadWithFakes$$' ./cmd/vera-replay/
	@FUZZTIME=$(FUZZTIME) TAGS=$(TAGS) bash .ci/fuzz.sh

# Every fuzz target for FUZZTIME each (make test runs this too).
fuzz:
	@FUZZTIME=$(FUZZTIME) TAGS=$(TAGS) bash .ci/fuzz.sh

# Our VAD side by side with WebRTC VAD (modes 2, 3) and Silero v5 on the same
# frames, collar and noise mixes. Installs the npm anchors into a cache
# folder outside the module.
vad-anchors: deps
	bash cmd/vera-eval/anchors/run.sh

# CPU per real-time stream of Silero v5 and webrtcvad (% of one core), for the
# capacity table; not part of `make test`. ARGS e.g. "--seconds 120 --reps 5".
.PHONY: vad-cpu-anchor
vad-cpu-anchor:
	bash cmd/vera-eval/anchors/run.sh --cpu $(ARGS)

bench: deps
	$(GO) test -tags $(TAGS) -run '^$$' -bench '$(BENCH)' -benchmem ./...

clean:
	rm -rf $(BIN)
