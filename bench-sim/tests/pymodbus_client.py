"""A pymodbus (3.16.1) client that runs a plan of Modbus operations against the simulated bench.

Interoperability check with a Modbus stack we did not write. The Rust test builds the plan from
the device profiles (so no address is written here), runs this script, and checks the results.

Usage: python pymodbus_client.py (--tcp HOST:PORT | --rtu PATH --baud B) PLAN_JSON
PLAN_JSON is a list of {"op": "read"|"read_input"|"write", "unit": N, "address": A,
"count": N | "values": [...]}. Prints one JSON list: per operation {"registers": [...]},
{"ok": true} or {"exception": code}; exits 3 if pymodbus is missing or not 3.16.1.
"""

import argparse
import json
import sys

try:
    import pymodbus
    from pymodbus.client import ModbusSerialClient, ModbusTcpClient
except ImportError as e:  # never skip silently: the test reports this
    print(f"pymodbus is not installed for {sys.executable}: {e}", file=sys.stderr)
    sys.exit(3)

if pymodbus.__version__ != "3.16.1":
    print(f"pymodbus {pymodbus.__version__} found, 3.16.1 required", file=sys.stderr)
    sys.exit(3)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tcp")
    ap.add_argument("--rtu")
    ap.add_argument("--baud", type=int, default=115200)
    ap.add_argument("plan")
    a = ap.parse_args()
    if a.tcp:
        host, port = a.tcp.rsplit(":", 1)
        client = ModbusTcpClient(host, port=int(port), timeout=2)
    else:
        client = ModbusSerialClient(port=a.rtu, baudrate=a.baud, timeout=2, retries=0)
    if not client.connect():
        print("cannot connect", file=sys.stderr)
        sys.exit(2)
    out = []
    for op in json.loads(a.plan):
        kind = op["op"]
        if kind == "read":
            rr = client.read_holding_registers(op["address"], count=op["count"], device_id=op["unit"])
        elif kind == "read_input":
            rr = client.read_input_registers(op["address"], count=op["count"], device_id=op["unit"])
        elif kind == "write":
            rr = client.write_registers(op["address"], op["values"], device_id=op["unit"])
        else:
            raise SystemExit(f"unknown op {kind}")
        if rr.isError():
            out.append({"exception": getattr(rr, "exception_code", -1)})
        elif kind.startswith("read"):
            out.append({"registers": list(rr.registers)})
        else:
            out.append({"ok": True})
    client.close()
    print(json.dumps(out))


if __name__ == "__main__":
    main()
