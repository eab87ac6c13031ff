package docker

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// adoptWait bounds the wait for the container's start. loki-init ends
// the session itself (124) when no renewal comes within the lease.
const adoptWait = 60 * time.Second

// started follows the daemon's event stream, from since, for the start
// of the container name, and returns its id and its init's host pid. The
// stream replays what happened since then, so it may be opened after
// docker run was started.
func started(ctx context.Context, sock, name string, since time.Time) (id string, pid int, err error) {
	client := &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", sock)
		},
	}}
	defer client.CloseIdleConnections()
	filters, _ := json.Marshal(map[string][]string{"type": {"container"}, "container": {name}, "event": {"start"}})
	q := url.Values{"since": {strconv.FormatFloat(float64(since.UnixNano())/1e9, 'f', 3, 64)}, "filters": {string(filters)}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://docker/events?"+q.Encode(), nil)
	if err != nil {
		return "", 0, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return "", 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", 0, fmt.Errorf("events: %s", resp.Status)
	}
	dec := json.NewDecoder(bufio.NewReader(resp.Body))
	for {
		var ev struct {
			Action string
			Actor  struct{ ID string }
		}
		if err := dec.Decode(&ev); err != nil {
			return "", 0, fmt.Errorf("events: %v", err)
		}
		if ev.Action != "start" || ev.Actor.ID == "" {
			continue
		}
		ireq, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://docker/containers/"+url.PathEscape(ev.Actor.ID)+"/json", nil)
		if err != nil {
			return "", 0, err
		}
		iresp, err := client.Do(ireq)
		if err != nil {
			return "", 0, err
		}
		var c struct {
			ID    string `json:"Id"`
			State struct{ Pid int }
		}
		err = json.NewDecoder(iresp.Body).Decode(&c)
		iresp.Body.Close()
		if err != nil {
			return "", 0, fmt.Errorf("container inspect: %v", err)
		}
		if c.State.Pid <= 0 {
			return "", 0, errors.New("the container is no longer running")
		}
		return c.ID, c.State.Pid, nil
	}
}

// adopt moves the container's init into the session's cgroup (v1: the
// kernel counts a refused fork only in the forker's own cgroup, and the
// engine's is removed with the container). loki-init starts nothing
// before a lease renewal, and renewals begin once Start has returned, so
// the peer and all it starts are born inside. A docker run that ends
// first leaves nothing to adopt: Wait reports it.
func (p *process) adopt(sock string) error {
	ctx, cancel := context.WithTimeout(context.Background(), adoptWait)
	defer cancel()
	type found struct {
		id  string
		pid int
		err error
	}
	ch := make(chan found, 1)
	go func() {
		id, pid, err := started(ctx, sock, p.name, p.started.Add(-time.Second))
		ch <- found{id, pid, err}
	}()
	select {
	case <-p.exited:
		return nil
	case f := <-ch:
		if f.err != nil {
			select {
			case <-p.exited:
				return nil
			default:
			}
			return f.err
		}
		return p.cg.Adopt(f.pid, f.id)
	}
}
