package controller

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	kubebuilderv1 "github.com/kopgo/kopgo/examples/kubebuilder/api/v1"
)

// kubebuilder's scaffolded controller test, with its TODOs done: it
// checks what the controller running in the suite's manager did, as the
// CronJob tutorial's test does, rather than calling Reconcile on a
// reconciler that went through no SetupWithManager.
var _ = Describe("ConfigSet Controller", func() {
	Context("When reconciling a resource", func() {
		const resourceName = "test-resource"

		ctx := context.Background()

		typeNamespacedName := types.NamespacedName{
			Name:      resourceName,
			Namespace: "default", // TODO(user):Modify as needed
		}
		configset := &kubebuilderv1.ConfigSet{}

		SetDefaultEventuallyTimeout(30 * time.Second)
		SetDefaultEventuallyPollingInterval(100 * time.Millisecond)

		BeforeEach(func() {
			By("creating the custom resource for the Kind ConfigSet")
			err := k8sClient.Get(ctx, typeNamespacedName, configset)
			if err != nil && apierrors.IsNotFound(err) {
				resource := &kubebuilderv1.ConfigSet{
					ObjectMeta: metav1.ObjectMeta{
						Name:      resourceName,
						Namespace: "default",
					},
					Spec: kubebuilderv1.ConfigSetSpec{Configs: []kubebuilderv1.ConfigEntry{
						{Name: "web", Data: map[string]string{"mode": "fast"}},
					}},
				}
				Expect(k8sClient.Create(ctx, resource)).To(Succeed())
			}
		})

		AfterEach(func() {
			resource := &kubebuilderv1.ConfigSet{}
			err := k8sClient.Get(ctx, typeNamespacedName, resource)
			Expect(err).NotTo(HaveOccurred())

			By("Cleanup the specific resource instance ConfigSet")
			Expect(k8sClient.Delete(ctx, resource)).To(Succeed())
			By("Waiting for the controller to remove its finalizer")
			Eventually(func() bool {
				return apierrors.IsNotFound(k8sClient.Get(ctx, typeNamespacedName, &kubebuilderv1.ConfigSet{}))
			}).Should(BeTrue())
			// The test's control plane runs no garbage collector (nor does
			// envtest's): delete the ConfigMaps it would, or the next
			// ConfigSet of the same name finds them controlled by this one,
			// and kopgo's Applier does not take them over.
			By("Deleting the ConfigMaps of the deleted ConfigSet")
			Expect(k8sClient.DeleteAllOf(ctx, &corev1.ConfigMap{}, client.InNamespace(typeNamespacedName.Namespace),
				client.MatchingLabels{ConfigSetLabel: resourceName})).To(Succeed())
		})

		It("should successfully reconcile the resource", func() {
			By("Checking the ConfigMap of the entry")
			Eventually(func(g Gomega) {
				g.Expect(k8sClient.Get(ctx, typeNamespacedName, configset)).To(Succeed())
				var cm corev1.ConfigMap
				g.Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: "default", Name: resourceName + "-web"}, &cm)).To(Succeed())
				g.Expect(cm.Data).To(Equal(map[string]string{"mode": "fast"}))
				g.Expect(metav1.IsControlledBy(&cm, configset)).To(BeTrue())
			}).Should(Succeed())

			By("Checking the status: Ready for the current generation")
			Eventually(func(g Gomega) {
				g.Expect(k8sClient.Get(ctx, typeNamespacedName, configset)).To(Succeed())
				ready := apimeta.FindStatusCondition(configset.Status.Conditions, "Ready")
				g.Expect(ready).NotTo(BeNil())
				g.Expect(ready.Status).To(Equal(metav1.ConditionTrue))
				g.Expect(ready.Reason).To(Equal("Applied"))
				g.Expect(configset.Status.ObservedGeneration).To(Equal(configset.Generation))
				g.Expect(configset.Status.ConfigMaps).To(Equal(int32(1)))
			}).Should(Succeed())
		})

		It("should successfully reconcile the resource when called directly", func() {
			By("Reconciling the created resource")
			// The scaffold's own test: Reconcile called on a reconciler built
			// here. kopgo's helpers come from SetupWithManager, so it gets a
			// manager, which need not run (and a name check off: the suite's
			// manager runs a controller of the same name).
			mgr, err := ctrl.NewManager(cfg, ctrl.Options{
				Scheme:     k8sClient.Scheme(),
				Metrics:    metricsserver.Options{BindAddress: "0"},
				Controller: config.Controller{SkipNameValidation: new(true)},
			})
			Expect(err).NotTo(HaveOccurred())
			controllerReconciler := &ConfigSetReconciler{
				Client: k8sClient,
				Scheme: k8sClient.Scheme(),
			}
			Expect(controllerReconciler.SetupWithManager(mgr)).To(Succeed())

			_, err = controllerReconciler.Reconcile(ctx, reconcile.Request{
				NamespacedName: typeNamespacedName,
			})
			Expect(err).NotTo(HaveOccurred())
			Expect(k8sClient.Get(ctx, typeNamespacedName, configset)).To(Succeed())
			Expect(apimeta.IsStatusConditionTrue(configset.Status.Conditions, "Ready")).To(BeTrue())
		})
	})
})
