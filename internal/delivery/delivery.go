// Package delivery sends waypoint notifications to their receivers: durably (the work
// list is the notifications table, claimed with a lease), at least once, signed with
// Standard Webhooks headers, with retries on a stored schedule, and with each subscription
// delivered in order on its own so that a slow or dead receiver holds up no one else.
package delivery

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"math"
	mrand "math/rand/v2"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/connected-vehicle/vcs/internal/store"
)

// Policy is a retry schedule.
type Policy struct {
	// Delays are the waits before each retry; an attempt after the last one is final.
	Delays []time.Duration
	// MaxRetryAfter caps how long a receiver's Retry-After may postpone a retry.
	MaxRetryAfter time.Duration
	// Jitter spreads each delay by up to this fraction either way.
	Jitter float64
}

// SandboxPolicy gives up after 5 tries within about 10 minutes.
func SandboxPolicy() Policy {
	return Policy{
		Delays:        []time.Duration{10 * time.Second, 30 * time.Second, 90 * time.Second, 5 * time.Minute},
		MaxRetryAfter: 5 * time.Minute,
		Jitter:        0.2,
	}
}

// ProductionPolicy gives up after 8 tries within about 3 days.
func ProductionPolicy() Policy {
	return Policy{
		Delays: []time.Duration{time.Minute, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 5 * time.Hour,
			12 * time.Hour, 24 * time.Hour},
		MaxRetryAfter: 12 * time.Hour,
		Jitter:        0.2,
	}
}

// MaxAttempts is how many tries a notification gets.
func (p Policy) MaxAttempts() int { return len(p.Delays) + 1 }

// delay is the wait before the retry that follows attempt (1-based), jittered.
func (p Policy) delay(attempt int) time.Duration {
	d := p.Delays[min(attempt, len(p.Delays))-1]
	if p.Jitter > 0 {
		d = time.Duration(float64(d) * (1 + p.Jitter*(2*mrand.Float64()-1)))
	}
	return d
}

// Config configures an Engine.
type Config struct {
	DB     *store.DB
	Policy Policy
	// PublicOnly refuses to connect to non-global addresses (production), whatever the URL
	// says and wherever a redirect points.
	PublicOnly bool
	UserAgent  string
	Logger     *slog.Logger
	// Now returns the current time; nil means time.Now.
	Now func() time.Time
	// Timeout bounds one HTTP attempt (default 10 s).
	Timeout time.Duration
	// Workers bounds the attempts under way at once (default 256).
	Workers int
	// Lease is how long a claim lasts before another engine may take the notification;
	// the default outlasts a full subscription queue's wait plus an attempt.
	Lease time.Duration
	// Exclusive says that this engine is the only one on its database (SQLite): at start it
	// takes back the claims a crashed process left, instead of waiting for their leases.
	Exclusive bool
	// Transport replaces the HTTP transport (tests); nil builds the guarded one.
	Transport http.RoundTripper
}

// Bounds of the in-memory work list.
const (
	claimBatch     = 256
	maxQueued      = 4096 // claimed notifications held in memory, all subscriptions
	maxPerSub      = 64   // claimed notifications held for one subscription
	idlePoll       = time.Second
	recordBatchMax = 256
)

// Engine delivers notifications until its Run context ends.
type Engine struct {
	cfg    Config
	log    *slog.Logger
	http   *http.Client
	worker string // this engine's name in claims
	wake   chan struct{}
	slots  chan struct{} // a token per attempt under way
	record chan *store.Outcome

	mu     sync.Mutex
	queues map[int64]*queue // by subscription
	queued int
	freed  chan struct{} // signalled when queue room frees up after being full
}

// queue is one subscription's claimed notifications, delivered in order by one goroutine.
type queue struct {
	items   []*store.Delivery
	running bool
}

// New returns an Engine.
func New(cfg Config) *Engine {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = 10 * time.Second
	}
	if cfg.Workers == 0 {
		cfg.Workers = 256
	}
	if cfg.Lease == 0 {
		// A claimed notification may wait behind a whole queue of attempts that each take
		// the full timeout; its claim must not run out meanwhile, or another engine (or
		// this one) would send it again.
		cfg.Lease = time.Duration(maxPerSub+2)*cfg.Timeout + time.Minute
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Transport == nil {
		cfg.Transport = newTransport(cfg.PublicOnly, cfg.Timeout)
	}
	name := make([]byte, 8)
	_, _ = rand.Read(name)
	return &Engine{
		cfg:    cfg,
		log:    cfg.Logger,
		http:   &http.Client{Transport: cfg.Transport, Timeout: cfg.Timeout, CheckRedirect: noRedirects},
		worker: hex.EncodeToString(name),
		wake:   make(chan struct{}, 1),
		slots:  make(chan struct{}, cfg.Workers),
		record: make(chan *store.Outcome, maxQueued),
		queues: map[int64]*queue{},
		freed:  make(chan struct{}, 1),
	}
}

// noRedirects leaves redirects to the engine, which handles each status as the SPEC says.
func noRedirects(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// Wake tells the engine that notifications may be due now.
func (e *Engine) Wake() {
	select {
	case e.wake <- struct{}{}:
	default:
	}
}

func (e *Engine) now() time.Time { return e.cfg.Now().UTC() }

// Run delivers until ctx ends, then waits for the attempts under way to be recorded.
func (e *Engine) Run(ctx context.Context) error {
	if e.cfg.Exclusive {
		var n int64
		err := e.cfg.DB.WriteTx(ctx, func(q *store.Queries) (err error) {
			n, err = q.ReleaseClaims(ctx, e.now())
			return err
		})
		if err != nil {
			return err
		}
		if n > 0 {
			e.log.Info("resuming deliveries interrupted by the last stop", "notifications", n)
		}
	}

	var workers sync.WaitGroup
	recorded := make(chan struct{})
	go func() {
		defer close(recorded)
		e.recordLoop()
	}()

	timer := time.NewTimer(0)
	defer timer.Stop()
	for ctx.Err() == nil {
		room := e.room()
		var claimed []*store.Delivery
		if room > 0 {
			var err error
			if claimed, err = e.claim(ctx, min(room, claimBatch)); err != nil && ctx.Err() == nil {
				e.log.Error("claim notifications", "err", err)
			}
			for _, d := range claimed {
				e.enqueue(ctx, &workers, d)
			}
		}
		if room > 0 && len(claimed) == min(room, claimBatch) {
			continue // there may be more due right now
		}
		wait := idlePoll
		if room > 0 {
			// A due time already past belongs to a subscription whose queue is full:
			// its queue's progress (freed) is what to wait for, not the clock.
			if next, err := e.cfg.DB.Read().NextDue(ctx); err == nil && next != nil && next.After(e.now()) {
				wait = min(wait, next.Sub(e.now()))
			}
		}
		timer.Reset(wait)
		select {
		case <-ctx.Done():
		case <-e.wake:
		case <-e.freed:
		case <-timer.C:
		}
	}
	workers.Wait()
	close(e.record)
	<-recorded
	return nil
}

// room is how many more notifications the engine may hold.
func (e *Engine) room() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return maxQueued - e.queued
}

// saturated lists the subscriptions whose queues are full, not to be claimed from.
func (e *Engine) saturated() []int64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []int64
	for id, q := range e.queues {
		if len(q.items) >= maxPerSub {
			out = append(out, id)
		}
	}
	return out
}

func (e *Engine) claim(ctx context.Context, limit int) ([]*store.Delivery, error) {
	var out []*store.Delivery
	skip := e.saturated()
	now := e.now()
	err := e.cfg.DB.WriteTx(ctx, func(q *store.Queries) (err error) {
		out, err = q.ClaimDeliveries(ctx, e.worker, now, now.Add(e.cfg.Lease), limit, skip)
		return err
	})
	return out, err
}

// enqueue adds d to its subscription's queue, starting the queue's goroutine if idle.
func (e *Engine) enqueue(ctx context.Context, workers *sync.WaitGroup, d *store.Delivery) {
	e.mu.Lock()
	defer e.mu.Unlock()
	q := e.queues[d.SubscriptionID]
	if q == nil {
		q = &queue{}
		e.queues[d.SubscriptionID] = q
	}
	q.items = append(q.items, d)
	e.queued++
	if !q.running {
		q.running = true
		workers.Add(1)
		go func() {
			defer workers.Done()
			e.drain(ctx, d.SubscriptionID, q)
		}()
	}
}

// drain delivers a subscription's queue in order until it is empty.
func (e *Engine) drain(ctx context.Context, sub int64, q *queue) {
	for {
		e.mu.Lock()
		if len(q.items) == 0 || ctx.Err() != nil {
			// On shutdown the rest stay claimed; their leases (or the next start of an
			// exclusive engine) make them due again.
			e.queued -= len(q.items)
			q.items, q.running = nil, false
			delete(e.queues, sub)
			e.mu.Unlock()
			e.signalFreed()
			return
		}
		d := q.items[0]
		q.items = q.items[1:]
		e.mu.Unlock()

		e.slots <- struct{}{}
		out := e.Attempt(ctx, d)
		<-e.slots
		e.record <- out

		e.mu.Lock()
		e.queued--
		e.mu.Unlock()
		e.signalFreed()
	}
}

func (e *Engine) signalFreed() {
	select {
	case e.freed <- struct{}{}:
	default:
	}
}

// recordLoop writes outcomes, many per transaction when they come fast.
func (e *Engine) recordLoop() {
	ctx := context.Background() // outcomes must be written even while shutting down
	batch := make([]*store.Outcome, 0, recordBatchMax)
	for out := range e.record {
		batch = append(batch[:0], out)
	fill:
		for len(batch) < recordBatchMax {
			select {
			case o, ok := <-e.record:
				if !ok {
					break fill
				}
				batch = append(batch, o)
			default:
				break fill
			}
		}
		err := e.cfg.DB.WriteTx(ctx, func(q *store.Queries) error {
			for _, o := range batch {
				if err := q.RecordOutcome(ctx, o); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil && len(batch) > 1 {
			// One outcome must not cost the others: record them one by one.
			e.log.Warn("record delivery outcomes together; recording them one by one", "err", err, "outcomes", len(batch))
			for _, o := range batch {
				if err := e.cfg.DB.WriteTx(ctx, func(q *store.Queries) error { return q.RecordOutcome(ctx, o) }); err != nil {
					// Its claim stays; the notification is attempted again when the claim ends.
					e.log.Error("record delivery outcome", "notification", o.NotificationID, "err", err)
				}
			}
		} else if err != nil {
			e.log.Error("record delivery outcome", "notification", batch[0].NotificationID, "err", err)
		}
		for _, o := range batch {
			if o.NextAttemptAt != nil && !o.NextAttemptAt.After(e.now()) {
				e.Wake()
			}
		}
	}
}

// retryAfter reads a Retry-After header: seconds or an HTTP date.
func retryAfter(h string, now time.Time) time.Duration {
	if h == "" {
		return 0
	}
	if secs, err := strconv.Atoi(h); err == nil && secs > 0 {
		return time.Duration(min(secs, math.MaxInt32)) * time.Second
	}
	if t, err := http.ParseTime(h); err == nil {
		return max(0, t.Sub(now))
	}
	return 0
}
