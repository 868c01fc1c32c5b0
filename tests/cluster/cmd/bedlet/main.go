// Command bedlet is the part of the test bed's fake kubelet that kwok's
// stages cannot express: it admits every new pod once the Secrets and
// ConfigMaps its volumes mount exist (kwok binds only admitted ones), plays openstack-helm's kubernetes-entrypoint init containers (a
// gated pod starts only once its dependencies hold), injects the faults a
// namespace's bed-faults ConfigMap names, confirms a deleted pod's deletion
// for that pod's UID only (terminate.go), and it is the external provisioner
// behind the bed's StorageClasses.
//
// It only watches (shared informers) and reacts; it never polls.
package main

import (
	"context"
	"flag"
	"log"
	"os"
	"os/signal"
	"syscall"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/record"
)

func main() {
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig of the bed")
	flag.Parse()
	log.SetFlags(log.LstdFlags | log.Lmicroseconds)

	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		log.Fatalf("kubeconfig: %v", err)
	}
	cfg.UserAgent = "bedlet"
	client := kubernetes.NewForConfigOrDie(cfg)
	dyn := dynamic.NewForConfigOrDie(cfg)

	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()

	broadcaster := record.NewBroadcaster(record.WithContext(ctx))
	broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: client.CoreV1().Events("")})
	defer broadcaster.Shutdown()
	recorder := broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: "bedlet"})

	factory := informers.NewSharedInformerFactory(client, 0)
	pods := factory.Core().V1().Pods()
	jobs := factory.Batch().V1().Jobs()
	slices := factory.Discovery().V1().EndpointSlices()
	daemonSets := factory.Apps().V1().DaemonSets()
	claims := factory.Core().V1().PersistentVolumeClaims()
	volumes := factory.Core().V1().PersistentVolumes()
	classes := factory.Storage().V1().StorageClasses()

	crs := &CustomResources{
		factory: dynamicinformer.NewDynamicSharedInformerFactory(dyn, 0),
		mapper:  restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(client.Discovery())),
		stop:    ctx.Done(),
		listers: map[schema.GroupVersionKind]informers.GenericInformer{},
	}
	resolver := &Resolver{
		Jobs: jobs.Lister(), Slices: slices.Lister(), DaemonSets: daemonSets.Lister(),
		Pods: pods.Lister(), Resources: crs,
	}
	faults := &Faults{client: client, recorder: recorder}
	gate := NewGate(client, pods.Lister(), resolver, recorder, faults)
	// Secrets and ConfigMaps are watched as metadata only: whether a volume's
	// object exists is all admission asks.
	metaClient := metadata.NewForConfigOrDie(cfg)
	metaFactory := metadatainformer.NewSharedInformerFactory(metaClient, 0)
	secrets := metaFactory.ForResource(secretsResource)
	configMaps := metaFactory.ForResource(configMapsResource)
	mounts := &Mounts{client: metaClient, secrets: secrets.Lister(), configMaps: configMaps.Lister()}
	admission := NewAdmission(client, pods.Lister(), faults, mounts, recorder)
	if _, err := pods.Informer().AddEventHandler(admission.Handler()); err != nil {
		log.Fatalf("informer: %v", err)
	}
	for _, inf := range []cache.SharedIndexInformer{secrets.Informer(), configMaps.Informer()} {
		if _, err := inf.AddEventHandler(admission.MountHandler()); err != nil {
			log.Fatalf("informer: %v", err)
		}
	}
	crs.onEvent = gate.Handler()
	terminator := NewTerminator(client)
	if _, err := pods.Informer().AddEventHandler(terminator.Handler()); err != nil {
		log.Fatalf("informer: %v", err)
	}
	for _, inf := range []cache.SharedIndexInformer{pods.Informer(), jobs.Informer(), slices.Informer(), daemonSets.Informer()} {
		if _, err := inf.AddEventHandler(gate.Handler()); err != nil {
			log.Fatalf("informer: %v", err)
		}
	}
	prov := NewProvisioner(client, claims.Lister(), volumes.Lister(), classes.Lister())
	if _, err := claims.Informer().AddEventHandler(prov.ClaimHandler()); err != nil {
		log.Fatalf("informer: %v", err)
	}
	if _, err := volumes.Informer().AddEventHandler(prov.VolumeHandler()); err != nil {
		log.Fatalf("informer: %v", err)
	}
	_ = classes.Informer()

	factory.Start(ctx.Done())
	metaFactory.Start(ctx.Done())
	for typ, ok := range factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			log.Fatalf("cache of %v did not sync", typ)
		}
	}
	for res, ok := range metaFactory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			log.Fatalf("cache of %v did not sync", res)
		}
	}
	log.Printf("bedlet: admitting pods once their volumes' Secrets and ConfigMaps exist, watching them for kubernetes-entrypoint dependencies, injecting %s faults, confirming deletions by UID; provisioning for %s", faultsConfigMap, provisionerName)
	go prov.Run(ctx)
	go admission.Run(ctx)
	go terminator.Run(ctx)
	gate.Run(ctx)
	factory.Shutdown()
	metaFactory.Shutdown()
	crs.factory.Shutdown()
}
