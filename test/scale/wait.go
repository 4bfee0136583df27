package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// progressEvery is how often waitAll reports progress.
const progressEvery = 10 * time.Second

// waitAll watches the objects of list's kind in the bench namespace until n
// of them satisfy done. A watch that ends is started again from a new List.
func waitAll(ctx context.Context, c client.WithWatch, list client.ObjectList, n int, done func(client.Object) bool) error {
	state := doneSet{}
	lastReport := time.Now()
	for {
		if err := c.List(ctx, list, client.InNamespace(namespace)); err != nil {
			return err
		}
		items, err := meta.ExtractList(list)
		if err != nil {
			return err
		}
		for _, item := range items {
			obj := item.(client.Object)
			state.set(obj.GetName(), done(obj))
		}
		if state.count >= n {
			return nil
		}
		listMeta, err := meta.ListAccessor(list)
		if err != nil {
			return err
		}
		from := &client.ListOptions{Namespace: namespace, Raw: &metav1.ListOptions{ResourceVersion: listMeta.GetResourceVersion()}}
		w, err := c.Watch(ctx, list, from)
		if err != nil {
			return err
		}
		for ev := range w.ResultChan() {
			if ev.Type == watch.Error {
				break
			}
			obj, ok := ev.Object.(client.Object)
			if !ok {
				continue
			}
			state.set(obj.GetName(), ev.Type != watch.Deleted && done(obj))
			if time.Since(lastReport) > progressEvery {
				fmt.Fprintf(os.Stderr, "bench-scale: %d of %d done\n", state.count, n)
				lastReport = time.Now()
			}
			if state.count >= n {
				w.Stop()
				return nil
			}
		}
		w.Stop()
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
}

// doneSet tracks which objects are done, and how many.
type doneSet struct {
	done  map[string]bool
	count int
}

func (d *doneSet) set(name string, done bool) {
	if d.done == nil {
		d.done = map[string]bool{}
	}
	if d.done[name] != done {
		d.done[name] = done
		if done {
			d.count++
		} else {
			d.count--
		}
	}
}
