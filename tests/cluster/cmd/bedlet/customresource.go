package main

import (
	"fmt"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/cache"
)

// CustomResources watches each kind a DEPENDENCY_CUSTOM_RESOURCE names, with
// an informer started the first time the kind is asked for, so a change to
// such a resource re-evaluates the pods waiting on it.
type CustomResources struct {
	factory dynamicinformer.DynamicSharedInformerFactory
	mapper  *restmapper.DeferredDiscoveryRESTMapper
	onEvent cache.ResourceEventHandler
	stop    <-chan struct{}

	mu      sync.Mutex
	listers map[schema.GroupVersionKind]informers.GenericInformer
}

// Get returns the object, nil when it does not exist, or an error while the
// kind is unknown to the apiserver or its cache is still filling.
func (c *CustomResources) Get(apiVersion, kind, namespace, name string) (*unstructured.Unstructured, error) {
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return nil, err
	}
	inf, err := c.informer(gv.WithKind(kind))
	if err != nil {
		return nil, err
	}
	if !inf.Informer().HasSynced() {
		return nil, fmt.Errorf("the cache of %s %s is filling", apiVersion, kind)
	}
	var obj interface{}
	if namespace != "" {
		obj, err = inf.Lister().ByNamespace(namespace).Get(name)
	} else {
		obj, err = inf.Lister().Get(name)
	}
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return nil, fmt.Errorf("unexpected %T in the cache of %s", obj, kind)
	}
	return u, nil
}

func (c *CustomResources) informer(gvk schema.GroupVersionKind) (informers.GenericInformer, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if inf, ok := c.listers[gvk]; ok {
		return inf, nil
	}
	mapping, err := c.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		// A CRD created since the last discovery: look again next time.
		c.mapper.Reset()
		return nil, fmt.Errorf("%s is not served (yet): %w", gvk, err)
	}
	inf := c.factory.ForResource(mapping.Resource)
	if _, err := inf.Informer().AddEventHandler(c.onEvent); err != nil {
		return nil, err
	}
	c.factory.Start(c.stop)
	c.listers[gvk] = inf
	return inf, nil
}

func metaSelector(s *metav1.LabelSelector) (labels.Selector, error) {
	return metav1.LabelSelectorAsSelector(s)
}
