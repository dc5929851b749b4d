"""Sends one push with aioapns, a real APNs client, to an Offstage gateway instead of Apple's.

aioapns always connects to api.push.apple.com:443 over TLS; the only changes made here are the host and port it
connects to and the certificate authority it trusts (the test's own). Everything on the wire is aioapns's: the TLS
handshake, HTTP/2 (the h2 library), the ES256 provider token (PyJWT), the apns-* headers.

Usage: apns_client.py HOST PORT CA_FILE KEY_FILE KEY_ID TEAM_ID TOPIC TOKEN PAYLOAD_JSON PUSH_TYPE PRIORITY
Prints one JSON object: {"status": "200", "id": "...", "description": ..., "successful": true}.
"""

import asyncio
import json
import ssl
import sys

from aioapns import APNs, NotificationRequest, PushType
from aioapns import connection


def main() -> None:
    host, port, ca_file, key_file, key_id, team_id, topic, token, payload, push_type, priority = sys.argv[1:12]
    connection.APNsProductionClientProtocol.APNS_SERVER = host
    connection.APNsProductionClientProtocol.APNS_PORT = int(port)
    context = ssl.create_default_context(cafile=ca_file)
    with open(key_file) as handle:
        key = handle.read()

    async def send() -> dict:
        apns = APNs(key=key, key_id=key_id, team_id=team_id, topic=topic, use_sandbox=False, ssl_context=context)
        request = NotificationRequest(
            device_token=token, message=json.loads(payload), push_type=PushType(push_type), priority=int(priority))
        result = await apns.send_notification(request)
        return {
            "status": str(result.status),
            "id": result.notification_id,
            "description": result.description,
            "successful": result.is_successful,
        }

    print(json.dumps(asyncio.run(send())), flush=True)


if __name__ == "__main__":
    main()
