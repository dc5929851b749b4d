"""Sends one Web Push message with pywebpush, a real Web Push client, to an Offstage gateway.

pywebpush encrypts the message to the subscription's keys (RFC 8291, aes128gcm, through http_ece), signs a VAPID token
with py_vapid (RFC 8292) and POSTs it over HTTP/1.1 with requests, as it does to any push service. Nothing here
changes what it sends.

Usage:
  webpush_client.py keygen PRIVATE_KEY_FILE
      makes a VAPID key pair, writes the private key (PEM) and prints the public key (base64url, uncompressed)
  webpush_client.py send SUBSCRIPTION_JSON_FILE PRIVATE_KEY_FILE DATA TTL [URGENCY [TOPIC]]
      sends DATA; prints one JSON object: {"status": 201, "location": "...", "ttl": "...", "body": "..."}
"""

import json
import sys

from cryptography.hazmat.primitives import serialization
from py_vapid import Vapid02, b64urlencode
from pywebpush import WebPushException, webpush


def keygen(path: str) -> None:
    vapid = Vapid02()
    vapid.generate_keys()
    vapid.save_key(path)
    raw = vapid.public_key.public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)
    print(b64urlencode(raw), flush=True)


def send(subscription_file: str, key_file: str, data: str, ttl: str, urgency: str = "", topic: str = "") -> None:
    with open(subscription_file) as handle:
        subscription = json.load(handle)
    headers = {}
    if urgency:
        headers["Urgency"] = urgency
    if topic:
        headers["Topic"] = topic
    try:
        response = webpush(
            subscription_info=subscription,
            data=data,
            vapid_private_key=key_file,
            vapid_claims={"sub": "mailto:ops@example.com"},
            ttl=int(ttl),
            headers=headers,
            timeout=10,
        )
    except WebPushException as error:
        response = error.response
        if response is None:
            raise
    print(
        json.dumps(
            {
                "status": response.status_code,
                "location": response.headers.get("Location"),
                "ttl": response.headers.get("TTL"),
                "body": response.text,
            }
        ),
        flush=True,
    )


if __name__ == "__main__":
    if sys.argv[1] == "keygen":
        keygen(sys.argv[2])
    else:
        send(*sys.argv[2:])
