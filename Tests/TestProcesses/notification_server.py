#!/usr/bin/env python3
"""A minimal org.freedesktop.Notifications server for the desktop notification tests (SPEC NT-2).

Usage: notification_server.py BUS_ADDRESS RECORD_FILE COMMAND_FIFO [CLOSE_RECORD_FILE]

Registers org.freedesktop.Notifications on the bus at BUS_ADDRESS with dbus-fast (an implementation independent of
the client under test), appends every Notify call to RECORD_FILE as one JSON line (hints as {key: [signature, value]})
once its reply is on its way, and prints "ready" once the name is owned. Lines written to COMMAND_FIFO make it emit
signals:
    invoke ID KEY      ActionInvoked(ID, KEY)
    close ID REASON    NotificationClosed(ID, REASON)
A Notify whose summary is "hang" is never answered (and recorded at once), so a test can leave a call pending. With
CLOSE_RECORD_FILE, the id of every CloseNotification call is appended to it, one a line.
"""

import asyncio
import json
import sys
import threading

from dbus_fast import Variant
from dbus_fast.aio import MessageBus
from dbus_fast.service import ServiceInterface, dbus_method, dbus_signal

BUS_NAME = "org.freedesktop.Notifications"
OBJECT_PATH = "/org/freedesktop/Notifications"


class Notifications(ServiceInterface):
    def __init__(self, record_path, close_record_path):
        super().__init__(BUS_NAME)
        self.next_id = 1
        self.record_path = record_path
        self.close_record_path = close_record_path

    @staticmethod
    def append(path, line):
        with open(path, "a", encoding="utf-8") as file:
            file.write(line + "\n")

    @dbus_method()
    async def Notify(
        self, app_name: "s", replaces_id: "u", app_icon: "s", summary: "s", body: "s", actions: "as",
        hints: "a{sv}", expire_timeout: "i",
    ) -> "u":
        if replaces_id:
            notification_id = replaces_id
        else:
            notification_id = self.next_id
            self.next_id += 1
        record = {
            "id": notification_id, "app_name": app_name, "replaces_id": replaces_id, "app_icon": app_icon,
            "summary": summary, "body": body, "actions": actions,
            "hints": {key: [value.signature, value.value] for key, value in hints.items()},
            "expire_timeout": expire_timeout,
        }
        line = json.dumps(record, ensure_ascii=False)
        if summary == "hang":
            self.append(self.record_path, line)
            await asyncio.Future()  # never answered: the test ends the bus while the call waits
        # Recorded once the reply is sent: dbus-fast sends it from a callback of this task added before this one, so a
        # test that saw the record and then asks for a signal has the signal arrive after the reply.
        asyncio.current_task().add_done_callback(lambda _: self.append(self.record_path, line))
        return notification_id

    @dbus_method()
    def CloseNotification(self, notification_id: "u"):
        if self.close_record_path:
            self.append(self.close_record_path, str(notification_id))
        self.NotificationClosed(notification_id, 3)

    @dbus_method()
    def GetCapabilities(self) -> "as":
        return ["actions", "body", "body-markup"]

    @dbus_method()
    def GetServerInformation(self) -> "ssss":
        return ("offstage-test-server", "Offstage", "1.0", "1.2")

    @dbus_signal()
    def NotificationClosed(self, notification_id, reason) -> "uu":
        return (notification_id, reason)

    @dbus_signal()
    def ActionInvoked(self, notification_id, action_key) -> "us":
        return (notification_id, action_key)


def read_commands(fifo_path, loop, interface):
    """Runs on a thread: each writer's lines, then the FIFO is opened again for the next writer."""
    while True:
        with open(fifo_path, encoding="utf-8") as fifo:
            for line in fifo:
                words = line.split()
                if len(words) == 3 and words[0] == "invoke":
                    loop.call_soon_threadsafe(interface.ActionInvoked, int(words[1]), words[2])
                elif len(words) == 3 and words[0] == "close":
                    loop.call_soon_threadsafe(interface.NotificationClosed, int(words[1]), int(words[2]))


async def main():
    address, record_path, fifo_path = sys.argv[1:4]
    close_record_path = sys.argv[4] if len(sys.argv) > 4 else None
    bus = await MessageBus(bus_address=address).connect()
    interface = Notifications(record_path, close_record_path)
    bus.export(OBJECT_PATH, interface)
    await bus.request_name(BUS_NAME)
    threading.Thread(target=read_commands, args=(fifo_path, asyncio.get_running_loop(), interface), daemon=True).start()
    print("ready", flush=True)
    await bus.wait_for_disconnect()


if __name__ == "__main__":
    asyncio.run(main())
