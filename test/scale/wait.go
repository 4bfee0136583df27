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
	state := map[string]bool{}
	count := func() int {
		k := 0
		for _, ok := range state {
			if ok {
				k++
			}
		}
		return k
	}
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
			state[obj.GetName()] = done(obj)
		}
		if count() >= n {
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
			state[obj.GetName()] = ev.Type != watch.Deleted && done(obj)
			if time.Since(lastReport) > progressEvery {
				fmt.Fprintf(os.Stderr, "bench-scale: %d of %d done\n", count(), n)
				lastReport = time.Now()
			}
			if count() >= n {
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
