"""A pymodbus 3.16.1 server holding the simulated drive's register map (profiles/sim-drive.toml).

Interop peer for protocols/tests: a Modbus stack we did not write. It reads the register map
from the same profile the Rust clients use, serves it on unit 1 and emulates the parts of the
drive the client relies on: the CiA 402 state machine on controlword/statusword, the mode echo,
feedback that follows the commands, and the heartbeat counter.

usage: python pymodbus_drive_server.py PROFILE tcp            (prints the bound port, then serves)
       python pymodbus_drive_server.py PROFILE rtu PTY_PATH   (prints "ready", then serves)
The server stops when its standard input closes.
"""

import asyncio
import sys
import tomllib

import pymodbus
from pymodbus import FramerType
from pymodbus.server import ModbusSerialServer, ModbusTcpServer
from pymodbus.simulator import DataType, SimData, SimDevice

if pymodbus.__version__ != "3.16.1":
    sys.exit(f"pymodbus 3.16.1 required, found {pymodbus.__version__}")

profile_path, mode = sys.argv[1], sys.argv[2]
with open(profile_path, "rb") as f:
    profile = tomllib.load(f)


def addr(role):
    for s in profile["signal"]:
        if s.get("role") == role:
            return s["reg"]["address"]
    raise KeyError(role)


SIZES = {"u16": 1, "i16": 1, "u32": 2, "i32": 2, "f32": 2, "u64": 4, "i64": 4, "f64": 4}
END = max(s["reg"]["address"] + SIZES[s["reg"]["type"]] for s in profile["signal"])
CW, MODE, STATUS, MODE_DISP = addr("control_word"), addr("mode"), addr("status"), addr("mode_display")
HEARTBEAT = addr("heartbeat")
FOLLOW = [  # feedback register pair <- command register pair
    (addr("torque_feedback"), addr("torque_command")),
    (addr("velocity_feedback"), addr("velocity_command")),
    (addr("position_feedback"), addr("position_command")),
]
UNIT = profile["transport"]["unit_id"]


def next_status(status, cw):
    """CiA 402 transitions the client's sequences use."""
    if cw & 0x80:  # fault reset (edge detection is not needed for this peer)
        return 0x0040
    if status & 0x0008:  # fault latched until reset
        return status
    return {0x06: 0x0021, 0x07: 0x0023, 0x0F: 0x0027}.get(cw & 0x8F, 0x0040)


async def action(function_code, start_address, address, count, current_registers, set_values):
    regs = current_registers

    def at(a):
        return a - start_address

    if set_values is not None and function_code in (6, 16, 23):
        # Apply the write here so the derived registers see it (pymodbus applies it again).
        for i, v in enumerate(set_values):
            regs[at(address) + i] = int(v)
        if address <= CW < address + len(set_values):
            regs[at(STATUS)] = next_status(regs[at(STATUS)], regs[at(CW)])
        regs[at(MODE_DISP)] = regs[at(MODE)]
        enabled = regs[at(STATUS)] & 0x6F == 0x27
        for fb, cmd in FOLLOW:
            regs[at(fb)] = regs[at(cmd)] if enabled else 0
            regs[at(fb) + 1] = regs[at(cmd) + 1] if enabled else 0
    regs[at(HEARTBEAT)] = (regs[at(HEARTBEAT)] + 1) & 0xFFFF
    return None


async def main():
    initial = [0] * END
    initial[STATUS] = 0x0040  # switch on disabled
    device = SimDevice(
        id=UNIT,
        simdata=[SimData(address=0, values=initial, datatype=DataType.REGISTERS)],
        action=action,
    )
    if mode == "tcp":
        server = ModbusTcpServer(device, address=("127.0.0.1", 0))
        await server.serve_forever(background=True)
        port = server.transport.sockets[0].getsockname()[1]
        print(port, flush=True)
    else:
        # A pty ignores line settings, and pyserial's tcsetattr rejects parity on one: "N".
        server = ModbusSerialServer(
            device, framer=FramerType.RTU, port=sys.argv[3], baudrate=115200, parity="N"
        )
        await server.serve_forever(background=True)
        print("ready", flush=True)
    loop = asyncio.get_running_loop()
    await loop.run_in_executor(None, sys.stdin.read)
    await server.shutdown()


asyncio.run(main())
