#!/usr/bin/env python3
"""A stand-in for NetworkManager's metered hint, for the daemon's network-kind tests (SPEC SET-1).

Usage: network_manager.py BUS_ADDRESS METERED COMMAND_FIFO

Owns org.freedesktop.NetworkManager on the bus at BUS_ADDRESS with dbus-fast (an implementation independent of the
client under test) and exports the read-only property Metered (u, NetworkManager's NMMetered: 0 unknown, 1 yes,
2 no, 3 guess-yes, 4 guess-no) on /org/freedesktop/NetworkManager, as NetworkManager does, starting at METERED.
Prints "ready" once the name is owned. Lines written to COMMAND_FIFO:
    metered N      sets Metered to N and emits org.freedesktop.DBus.Properties.PropertiesChanged, as NetworkManager does
    quit           releases the name and exits (as NetworkManager stopping)
"""

import asyncio
import sys
import threading

from dbus_fast.aio import MessageBus
from dbus_fast.service import PropertyAccess, ServiceInterface, dbus_property

BUS_NAME = "org.freedesktop.NetworkManager"
OBJECT_PATH = "/org/freedesktop/NetworkManager"


class NetworkManager(ServiceInterface):
    def __init__(self, metered):
        super().__init__(BUS_NAME)
        self.metered = metered

    @dbus_property(access=PropertyAccess.READ)
    def Metered(self) -> "u":
        return self.metered

    def set_metered(self, value):
        self.metered = value
        self.emit_properties_changed({"Metered": value})


def read_commands(fifo_path, loop, interface, done):
    """Runs on a thread: each writer's lines, then the FIFO is opened again for the next writer."""
    while True:
        with open(fifo_path, encoding="utf-8") as fifo:
            for line in fifo:
                words = line.split()
                if len(words) == 2 and words[0] == "metered":
                    loop.call_soon_threadsafe(interface.set_metered, int(words[1]))
                elif words == ["quit"]:
                    loop.call_soon_threadsafe(done.set)
                    return


async def main():
    address, metered, fifo_path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    bus = await MessageBus(bus_address=address).connect()
    interface = NetworkManager(metered)
    bus.export(OBJECT_PATH, interface)
    await bus.request_name(BUS_NAME)
    done = asyncio.Event()
    threading.Thread(target=read_commands, args=(fifo_path, asyncio.get_running_loop(), interface, done), daemon=True).start()
    print("ready", flush=True)
    await done.wait()
    bus.disconnect()


if __name__ == "__main__":
    asyncio.run(main())
