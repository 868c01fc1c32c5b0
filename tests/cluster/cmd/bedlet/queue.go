package main

import (
	"context"
	"log"
	"time"

	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
)

// onAddOrUpdate hands the object of each add and update event to enqueue.
func onAddOrUpdate(enqueue func(obj interface{})) cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{AddFunc: enqueue, UpdateFunc: func(_, obj interface{}) { enqueue(obj) }}
}

// newQueue is the work queue of each of bedlet's loops: an item whose sync
// fails is tried again after a back-off, 200 ms doubling to 10 s.
func newQueue[T comparable]() workqueue.TypedRateLimitingInterface[T] {
	limiter := workqueue.NewTypedItemExponentialFailureRateLimiter[T](200*time.Millisecond, 10*time.Second)
	return workqueue.NewTypedRateLimitingQueue[T](limiter)
}

// runQueue syncs the queue's items one by one until ctx ends; an item that
// fails is logged under name and put back with its back-off.
func runQueue[T comparable](ctx context.Context, name string, queue workqueue.TypedRateLimitingInterface[T],
	sync func(context.Context, T) error) {
	go func() {
		<-ctx.Done()
		queue.ShutDown()
	}()
	for {
		item, quit := queue.Get()
		if quit {
			return
		}
		if err := sync(ctx, item); err != nil {
			log.Printf("%s: %v: %v (retrying)", name, item, err)
			queue.AddRateLimited(item)
		} else {
			queue.Forget(item)
		}
		queue.Done(item)
	}
}
