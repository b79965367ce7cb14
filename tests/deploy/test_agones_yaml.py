#!/usr/bin/env python3
"""deploy/agones/*.yaml parse, and every field they set is one Agones' published CRDs define, with
the right type, enum value and required fields (issue 18).

No Kubernetes (and no kubeconform with Agones' schemas) is at hand on these machines, so the
schemas below are a field list transcribed from Agones' own definitions: the Fleet CRD
(install/helm/agones/templates/crds/fleet.yaml with the GameServer spec schema it includes), the
FleetAutoscaler policy (crds/_fleetautoscalerpolicy.yaml), the GameServerAllocation reference
(examples/gameserverallocation.yaml, site docs "GameServerAllocation Specification") and the
Counters and Lists fields of the GameServer spec (examples/gameserver.yaml, Agones 1.41+). The
pod template inside a GameServer is Kubernetes' PodTemplateSpec; only the parts we set are
listed. A field not listed is an error: a typo (`bufferSise`) would otherwise be dropped
silently by the API server, and the deployment would not do what the file says."""

import os
import re
import sys

import yaml

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
DEPLOY = os.path.join(ROOT, "deploy", "agones")

# A spec is: a type name ("str", "int", "bool", "intstr", "quantity"), an enum (a tuple of
# values), a list [spec] for arrays, {"*": spec} for maps with any keys, or a dict of fields
# where a key ending in "!" is required.
STR_MAP = {"*": "str"}
SELECTOR = {"matchLabels": STR_MAP,
            "matchExpressions": [{"key!": "str", "operator!": "str", "values": ["str"]}]}
PRIORITY = {"type": ("Counter", "List"), "key": "str", "order": ("Ascending", "Descending")}
ENV = {"name!": "str", "value": "str",
       "valueFrom": {"secretKeyRef": {"name!": "str", "key!": "str", "optional": "bool"},
                     "configMapKeyRef": {"name!": "str", "key!": "str", "optional": "bool"},
                     "fieldRef": {"fieldPath!": "str"}}}
CONTAINER = {
    "name!": "str", "image!": "str", "args": ["str"], "command": ["str"], "env": [ENV],
    "imagePullPolicy": ("Always", "IfNotPresent", "Never"),
    "ports": [{"name": "str", "containerPort!": "int", "protocol": ("TCP", "UDP", "SCTP")}],
    "resources": {"requests": {"cpu": "quantity", "memory": "quantity"},
                  "limits": {"cpu": "quantity", "memory": "quantity"}},
}
POD_TEMPLATE = {
    "metadata": {"labels": STR_MAP, "annotations": STR_MAP},
    "spec!": {"containers!": [CONTAINER], "terminationGracePeriodSeconds": "int",
              "serviceAccountName": "str", "nodeSelector": STR_MAP},
}
GAMESERVER_SPEC = {
    "container": "str",
    "ports": [{"name": "str", "portPolicy": ("Dynamic", "Static", "Passthrough", "None"),
               "container": "str", "containerPort": "int", "hostPort": "int",
               "protocol": ("UDP", "TCP", "TCPUDP"), "range": "str"}],
    "health": {"disabled": "bool", "initialDelaySeconds": "int", "periodSeconds": "int",
               "failureThreshold": "int"},
    "scheduling": ("Packed", "Distributed"),
    "sdkServer": {"logLevel": ("Error", "Info", "Debug", "Trace"), "grpcPort": "int",
                  "httpPort": "int"},
    "players": {"initialCapacity": "int"},
    "counters": {"*": {"count": "int", "capacity": "int"}},
    "lists": {"*": {"capacity": "int", "values": ["str"]}},
    "eviction": {"safe": ("Always", "OnUpgrade", "Never")},
    "template!": POD_TEMPLATE,
}
FLEET = {
    "apiVersion!": ("agones.dev/v1",), "kind!": ("Fleet",),
    "metadata!": {"name!": "str", "namespace": "str", "labels": STR_MAP, "annotations": STR_MAP},
    "spec!": {
        "replicas": "int", "scheduling": ("Packed", "Distributed"),
        "allocationOverflow": {"labels": STR_MAP, "annotations": STR_MAP},
        "strategy": {"type": ("Recreate", "RollingUpdate"),
                     "rollingUpdate": {"maxSurge": "intstr", "maxUnavailable": "intstr"}},
        "priorities": [PRIORITY],
        "template!": {"metadata": {"labels": STR_MAP, "annotations": STR_MAP},
                      "spec!": GAMESERVER_SPEC},
    },
}
BUFFER = {"minReplicas": "int", "maxReplicas!": "int", "bufferSize": "intstr"}
CL_POLICY = {"key!": "str", "minCapacity": "int", "maxCapacity!": "int", "bufferSize!": "intstr"}
FLEET_AUTOSCALER = {
    "apiVersion!": ("autoscaling.agones.dev/v1",), "kind!": ("FleetAutoscaler",),
    "metadata!": {"name!": "str", "namespace": "str", "labels": STR_MAP},
    "spec!": {
        "fleetName!": "str",
        "policy!": {"type!": ("Buffer", "Webhook", "Counter", "List", "Chain"), "buffer": BUFFER,
                    "counter": CL_POLICY, "list": CL_POLICY},
        "sync": {"type": ("FixedInterval",), "fixedInterval": {"seconds": "int"}},
    },
}
GSA_SELECTOR = dict(SELECTOR, **{
    "gameServerState": ("Ready", "Allocated"),
    "players": {"minAvailable": "int", "maxAvailable": "int"},
    "counters": {"*": {"minCount": "int", "maxCount": "int", "minAvailable": "int",
                       "maxAvailable": "int"}},
    "lists": {"*": {"containsValue": "str", "minAvailable": "int", "maxAvailable": "int"}},
})
GAMESERVER_ALLOCATION = {
    "apiVersion!": ("allocation.agones.dev/v1",), "kind!": ("GameServerAllocation",),
    "metadata": {"name": "str", "generateName": "str", "namespace": "str"},
    "spec!": {
        "selectors": [GSA_SELECTOR], "required": GSA_SELECTOR, "preferred": [GSA_SELECTOR],
        "scheduling": ("Packed", "Distributed"),
        "metadata": {"labels": STR_MAP, "annotations": STR_MAP},
        "priorities": [PRIORITY],
        "counters": {"*": {"action": ("Increment", "Decrement"), "amount": "int",
                           "capacity": "int"}},
        "lists": {"*": {"addValues": ["str"], "deleteValues": ["str"], "capacity": "int"}},
        "multiClusterSetting": {"enabled": "bool", "policySelector": SELECTOR},
    },
}
SCHEMAS = {"Fleet": FLEET, "FleetAutoscaler": FLEET_AUTOSCALER,
           "GameServerAllocation": GAMESERVER_ALLOCATION}
QUANTITY = re.compile(r"^[0-9]+(\.[0-9]+)?(m|Ki|Mi|Gi|Ti|k|M|G|T)?$")


def validate(doc, spec, path, errors):
    if isinstance(spec, tuple):
        if doc not in spec:
            errors.append("%s: %r is not one of %s" % (path, doc, list(spec)))
    elif isinstance(spec, list):
        if not isinstance(doc, list):
            errors.append("%s: must be a list" % path)
            return
        for i, item in enumerate(doc):
            validate(item, spec[0], "%s[%d]" % (path, i), errors)
    elif isinstance(spec, dict):
        if not isinstance(doc, dict):
            errors.append("%s: must be a mapping" % path)
            return
        if "*" in spec:
            for k, v in doc.items():
                validate(v, spec["*"], "%s.%s" % (path, k), errors)
            return
        fields = {k.rstrip("!"): v for k, v in spec.items()}
        for k in spec:
            if k.endswith("!") and k[:-1] not in doc:
                errors.append("%s: the required field %s is missing" % (path, k[:-1]))
        for k, v in doc.items():
            if k not in fields:
                errors.append("%s: %s is not a field Agones defines here (known: %s)"
                              % (path, k, sorted(fields)))
            else:
                validate(v, fields[k], "%s.%s" % (path, k), errors)
    elif spec == "str":
        if not isinstance(doc, str):
            errors.append("%s: must be a string, got %r" % (path, doc))
    elif spec == "int":
        if not isinstance(doc, int) or isinstance(doc, bool):
            errors.append("%s: must be an integer, got %r" % (path, doc))
    elif spec == "bool":
        if not isinstance(doc, bool):
            errors.append("%s: must be true or false, got %r" % (path, doc))
    elif spec == "intstr":
        if not (isinstance(doc, int) and not isinstance(doc, bool)) and not (
                isinstance(doc, str) and re.fullmatch(r"[0-9]+%", doc)):
            errors.append("%s: must be an integer or a percentage, got %r" % (path, doc))
    elif spec == "quantity":
        if not (isinstance(doc, str) and QUANTITY.match(doc)) and not isinstance(doc, int):
            errors.append("%s: not a Kubernetes quantity: %r" % (path, doc))
    else:
        raise ValueError(spec)


def check_consistency(docs, errors):
    """What the files must agree on with each other and with collided's defaults."""
    fleet = docs["Fleet"]["spec"]
    gs = fleet["template"]["spec"]
    fas = docs["FleetAutoscaler"]["spec"]
    gsa = docs["GameServerAllocation"]["spec"]
    if fas["fleetName"] != docs["Fleet"]["metadata"]["name"]:
        errors.append("the FleetAutoscaler must scale the Fleet %s" % docs["Fleet"]["metadata"]["name"])
    if fas["policy"]["type"] != "Buffer" or "buffer" not in fas["policy"]:
        errors.append("the FleetAutoscaler must use a Buffer policy")
    if not any(p.get("protocol") == "TCP" and p.get("portPolicy") == "Dynamic" for p in gs["ports"]):
        errors.append("the game port must be Dynamic over TCP (protocol v1 is TCP)")
    if "players" not in gs.get("counters", {}) or "rooms" not in gs.get("lists", {}):
        errors.append("the Fleet must declare the players counter and the rooms list")
    env = {e["name"]: e.get("value") for c in gs["template"]["spec"]["containers"]
           for e in c.get("env", [])}
    health_ms = int(env.get("COLLIDE_AGONES_HEALTH_MS", "2000"))
    if health_ms * 2 > gs["health"]["periodSeconds"] * 1000:
        errors.append("Health every %d ms must fit twice in periodSeconds %d"
                      % (health_ms, gs["health"]["periodSeconds"]))
    rooms_cap = gs["lists"]["rooms"]["capacity"]
    if "COLLIDE_MAX_ROOMS" not in env or int(env["COLLIDE_MAX_ROOMS"]) + 1 != rooms_cap:
        errors.append("the rooms list capacity (%d) must be COLLIDE_MAX_ROOMS + 1" % rooms_cap)
    if rooms_cap > 1000:
        errors.append("Agones caps a list at 1000 values")
    states = [s.get("gameServerState", "Ready") for s in gsa["selectors"]]
    if "Ready" not in states or "Allocated" not in states:
        errors.append("the allocation must select a partly filled (Allocated) or a Ready server")
    for s in gsa["selectors"]:
        if s.get("lists", {}).get("rooms", {}).get("minAvailable", 0) < 1:
            errors.append("every selector needs spare room capacity (lists.rooms.minAvailable)")
    if "lists" in gsa or "counters" in gsa:
        errors.append("collided owns the rooms list and players counter: no allocation actions")


def main():
    errors = []
    docs = {}
    names = sorted(f for f in os.listdir(DEPLOY) if f.endswith(".yaml"))
    for name in names:
        with open(os.path.join(DEPLOY, name)) as f:
            for doc in yaml.safe_load_all(f):
                if doc is None:
                    continue
                kind = doc.get("kind")
                if kind not in SCHEMAS:
                    errors.append("%s: unexpected kind %r" % (name, kind))
                    continue
                validate(doc, SCHEMAS[kind], "%s:%s" % (name, kind), errors)
                docs[kind] = doc
    for kind in SCHEMAS:
        if kind not in docs:
            errors.append("deploy/agones has no %s" % kind)
    if not errors:
        check_consistency(docs, errors)
    for e in errors:
        print("FAIL " + e)
    print("%d files, %d documents, %d errors" % (len(names), len(docs), len(errors)))
    sys.exit(1 if errors else 0)


if __name__ == "__main__":
    main()
