"""The table's hardware behind small interfaces: buttons, status LEDs and buzzer, camera.

`hardware.config` holds the settings ([buttons], [indicators], [camera] of the companion's
TOML file); `hardware.buttons` turns presses into events on a queue; `hardware.indicators`
shows the companion's status; `hardware.camera` gives preview and full frames from a Pi
camera, a webcam, a recording or a synthetic table; `hardware.live` is the live loop (a press,
a still table, a read, a turn); `hardware.systemd` tells systemd the service is ready and
alive. GPIO goes through gpiozero, so every device can run on its MockFactory (tests) or any
real pin factory. Wiring: docs/hardware.md.
"""
