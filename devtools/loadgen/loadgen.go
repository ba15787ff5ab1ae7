package loadgen

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Request is one request the generator sends.
type Request struct {
	Method string
	URL    string
	Body   []byte
	Header http.Header
}

// Options configure a run.
type Options struct {
	// Connections is the number of concurrent connections (and workers).
	Connections int
	// Duration is how long to send requests after the warm-up, and at
	// least until a request has completed or failed: a machine too busy
	// to complete one in Duration gets a longer, slower measurement
	// rather than none (up to the client's timeout of 30 s); a server
	// that refuses them still ends it at Duration.
	Duration time.Duration
	// Warmup is run first and not measured.
	Warmup time.Duration
}

// Result summarises a run.
type Result struct {
	Requests    int           `json:"requests"`
	Errors      int           `json:"errors"`
	Non2xx      int           `json:"non_2xx"`
	Elapsed     time.Duration `json:"elapsed_ns"`
	RPS         float64       `json:"requests_per_second"`
	P50         time.Duration `json:"p50_ns"`
	P90         time.Duration `json:"p90_ns"`
	P99         time.Duration `json:"p99_ns"`
	Max         time.Duration `json:"max_ns"`
	Connections int           `json:"connections"`
	BytesRead   int64         `json:"bytes_read"`
}

// Run sends reqs round-robin (each worker starting at its own offset) over
// opts.Connections connections.
func Run(ctx context.Context, reqs []Request, opts Options) (*Result, error) {
	if len(reqs) == 0 {
		return nil, fmt.Errorf("loadgen: no requests")
	}
	if opts.Connections <= 0 {
		opts.Connections = 64
	}
	if opts.Duration <= 0 {
		opts.Duration = 5 * time.Second
	}
	tr := &http.Transport{
		MaxIdleConns:        opts.Connections,
		MaxIdleConnsPerHost: opts.Connections,
		MaxConnsPerHost:     opts.Connections,
		DisableCompression:  true,
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
	}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: clientTimeout}
	if opts.Warmup > 0 {
		if _, err := phase(ctx, client, reqs, opts.Connections, opts.Warmup, false); err != nil {
			return nil, err
		}
	}
	return phase(ctx, client, reqs, opts.Connections, opts.Duration, true)
}

// clientTimeout bounds a request, and how long a measured phase waits past
// its duration for its first completed request.
const clientTimeout = 30 * time.Second

type worker struct {
	lat    []time.Duration
	errs   int
	non2xx int
	bytes  int64
}

func phase(ctx context.Context, client *http.Client, reqs []Request, conns int, d time.Duration, measure bool) (*Result, error) {
	// The phase ends after d; a measured one also not before a request
	// has completed or failed since, so that a busy machine slows the
	// measurement instead of emptying it, while a dead server still
	// ends it at d.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var completed, failed atomic.Int64
	outcome := make(chan struct{}, 1)
	settle := func(n *atomic.Int64) {
		n.Add(1)
		select {
		case outcome <- struct{}{}:
		default:
		}
	}
	// start is taken before the timer that ends the phase, so that the
	// measured length is never shorter than d however late this
	// goroutine runs again between the two.
	start := time.Now()
	end := time.NewTimer(d)
	defer end.Stop()
	go func() {
		select {
		case <-end.C:
		case <-ctx.Done():
			return
		}
		if measure {
			safety := time.NewTimer(clientTimeout)
			defer safety.Stop()
			for failedAtEnd := failed.Load(); completed.Load() == 0 && failed.Load() == failedAtEnd; {
				select {
				case <-outcome:
				case <-safety.C:
					cancel()
					return
				case <-ctx.Done():
					return
				}
			}
		}
		cancel()
	}()
	workers := make([]worker, conns)
	var wg sync.WaitGroup
	for w := 0; w < conns; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			st := &workers[w]
			if measure {
				st.lat = make([]time.Duration, 0, 1<<14)
			}
			buf := make([]byte, 32<<10)
			for i := w; ctx.Err() == nil; i++ {
				r := reqs[i%len(reqs)]
				req, err := http.NewRequestWithContext(ctx, r.Method, r.URL, bytes.NewReader(r.Body))
				if err != nil {
					st.errs++
					return
				}
				for k, v := range r.Header {
					req.Header[k] = v
				}
				t0 := time.Now()
				resp, err := client.Do(req)
				if err != nil {
					if ctx.Err() == nil {
						st.errs++
						settle(&failed)
					}
					continue
				}
				for {
					n, err := resp.Body.Read(buf)
					st.bytes += int64(n)
					if err == io.EOF {
						break
					}
					if err != nil {
						if ctx.Err() == nil {
							st.errs++
							settle(&failed)
						}
						break
					}
				}
				resp.Body.Close()
				if ctx.Err() != nil {
					break
				}
				if resp.StatusCode/100 != 2 {
					st.non2xx++
				}
				if measure {
					st.lat = append(st.lat, time.Since(t0))
					settle(&completed)
				}
			}
		}(w)
	}
	wg.Wait()
	elapsed := time.Since(start)
	res := &Result{Elapsed: elapsed, Connections: conns}
	var all []time.Duration
	for i := range workers {
		all = append(all, workers[i].lat...)
		res.Errors += workers[i].errs
		res.Non2xx += workers[i].non2xx
		res.BytesRead += workers[i].bytes
	}
	res.Requests = len(all)
	if !measure {
		return res, nil
	}
	if res.Requests == 0 {
		return res, fmt.Errorf("loadgen: no request completed in %s (%d errors)", d, res.Errors)
	}
	slices.Sort(all)
	pct := func(p float64) time.Duration { return all[min(len(all)-1, int(p*float64(len(all))))] }
	res.P50, res.P90, res.P99, res.Max = pct(.50), pct(.90), pct(.99), all[len(all)-1]
	res.RPS = float64(res.Requests) / elapsed.Seconds()
	return res, nil
}
