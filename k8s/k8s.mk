# SPDX-License-Identifier: MIT
#
# k8s.mk - containers and Kubernetes (included by the root Makefile):
# fpgad-cdi (a CDI spec of fpgad's channels), fpgad-device-plugin (the
# channels as extended resources over the kubelet's v1beta1 API), and
# their tier.
#
#   make container-check   namespaces, CDI in podman, the device plugin
#                          against a fake kubelet (tests/containers/run.sh)
#   make install-k8s       the two programs and their modules (apart
#                          from make install: no Debian package ships them)

# podman and runc: the container tier runs real containers (runc where crun
# refuses a hybrid cgroup hierarchy); gRPC and its protoc: the device plugin
# (stubs generated at run time); jsonschema: the CDI spec against CDI's schema;
# yaml: the DaemonSet manifest's check.
DEBS += podman runc python3-grpcio python3-grpc-tools python3-jsonschema python3-yaml

.PHONY: container-check install-k8s
container-check: all
	$(call msg,TEST,tests/containers)
	$(Q)tests/containers/run.sh $(BUILD)

K8S_LIBDIR := $(DESTDIR)$(PREFIX)/lib/fpgad/k8s
install-k8s:
	install -D -m 0755 -t $(DESTDIR)$(PREFIX)/bin k8s/fpgad-cdi k8s/fpgad-device-plugin
	install -D -m 0644 -t $(K8S_LIBDIR) k8s/fpgad_cdi.py k8s/fpgad_device_plugin.py
	install -D -m 0644 -t $(K8S_LIBDIR)/deviceplugin/v1beta1 \
		k8s/deviceplugin/v1beta1/api.proto k8s/deviceplugin/v1beta1/LICENSE

