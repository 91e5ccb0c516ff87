"""GPIO adapters (buttons, LEDs, buzzer) built on gpiozero; filled by the live-companion issue."""
