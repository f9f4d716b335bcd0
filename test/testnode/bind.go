package testnode

import (
	"context"
	"time"

	"github.com/virtual-kubelet/virtual-kubelet/node/nodeutil"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// bindPending stands in for the scheduler: it binds each pod that waits for a node, asks for the
// default scheduler and fits this node's labels, to this node.
func bindPending(ctx context.Context, cs kubernetes.Interface, vk *nodeutil.Node, nodeName string) {
	select {
	case <-ctx.Done():
		return
	case <-vk.Ready():
	}
	node, err := cs.CoreV1().Nodes().Get(ctx, nodeName, metav1.GetOptions{})
	if err != nil {
		return
	}
	nodeLabels := labels.Set(node.Labels)
	factory := informers.NewSharedInformerFactoryWithOptions(cs, time.Minute,
		informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.FieldSelector = fields.OneTermEqualSelector("spec.nodeName", "").String()
		}))
	bind := func(obj any) {
		pod, ok := obj.(*corev1.Pod)
		if !ok || pod.Spec.NodeName != "" || pod.DeletionTimestamp != nil {
			return
		}
		if s := pod.Spec.SchedulerName; s != "" && s != corev1.DefaultSchedulerName {
			return
		}
		if !labels.SelectorFromSet(pod.Spec.NodeSelector).Matches(nodeLabels) {
			return
		}
		_ = cs.CoreV1().Pods(pod.Namespace).Bind(ctx, &corev1.Binding{
			ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace, UID: pod.UID},
			Target:     corev1.ObjectReference{Kind: "Node", Name: nodeName},
		}, metav1.CreateOptions{})
	}
	inf := factory.Core().V1().Pods().Informer()
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    bind,
		UpdateFunc: func(_, obj any) { bind(obj) },
	})
	factory.Start(ctx.Done())
}
