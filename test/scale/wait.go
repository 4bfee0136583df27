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

// tracker counts the objects that are done from what a watch shows.
type tracker interface {
	observe(obj client.Object, deleted bool)
	count() int
}

// waitAll watches the objects of list's kind in namespace ns (all of them
// for "") until t counts n done, telling series each count. A watch that
// ends is started again from a new List.
func waitAll(ctx context.Context, c client.WithWatch, ns string, list client.ObjectList, n int, t tracker, series *readySeries) error {
	lastReport := time.Now()
	for {
		if err := c.List(ctx, list, client.InNamespace(ns)); err != nil {
			return err
		}
		items, err := meta.ExtractList(list)
		if err != nil {
			return err
		}
		for _, item := range items {
			t.observe(item.(client.Object), false)
		}
		series.record(t.count())
		if t.count() >= n {
			return nil
		}
		listMeta, err := meta.ListAccessor(list)
		if err != nil {
			return err
		}
		from := &client.ListOptions{Namespace: ns, Raw: &metav1.ListOptions{ResourceVersion: listMeta.GetResourceVersion()}}
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
			t.observe(obj, ev.Type == watch.Deleted)
			series.record(t.count())
			if time.Since(lastReport) > progressEvery {
				fmt.Fprintf(os.Stderr, "bench-scale: %d of %d done\n", t.count(), n)
				lastReport = time.Now()
			}
			if t.count() >= n {
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

// doneObjects counts the objects for which done holds.
type doneObjects struct {
	done func(client.Object) bool
	set  doneSet
}

func (d *doneObjects) observe(obj client.Object, deleted bool) {
	d.set.set(obj.GetNamespace()+"/"+obj.GetName(), !deleted && d.done(obj))
}

func (d *doneObjects) count() int { return d.set.count }

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
