/** Where the progress goes: standard error, redrawn in place when it is a terminal. */
export interface ProgressOutput {
  /** A line of its own. */
  line(text: string): void;
  /** Only on a terminal: one line redrawn in place, and cleared. */
  inPlace?: { show(text: string): void; clear(): void };
}

/** An in-place progress line on standard error when it is a terminal (ANSI: back to column 0, erase to end). */
export function terminalProgress(stream: NodeJS.WriteStream): ProgressOutput {
  const line = (text: string) => void stream.write(`${text}\n`);
  if (!stream.isTTY) return { line };
  return {
    line,
    inPlace: {
      show: (text) => void stream.write(`\r${text}\x1b[K`),
      clear: () => void stream.write('\r\x1b[K'),
    },
  };
}

const TICK_MS = 1_000;
const LINE_EVERY_MS = 5_000;

/**
 * A progress line: redrawn every second in place, or, when the output is not a terminal (a log, a pipe),
 * written as a line of its own every five seconds. `render` is called only when the line is shown.
 */
export class ProgressLine {
  private timer: NodeJS.Timeout | undefined;
  /** The text drawn in place; '' when none. */
  private shown = '';
  private lastLineAt = 0;

  constructor(
    private readonly output: ProgressOutput,
    private readonly render: () => string,
  ) {}

  start(): void {
    this.lastLineAt = Date.now();
    this.timer = setInterval(() => this.tick(), TICK_MS);
  }

  /** A line of its own, without breaking the line drawn in place. */
  note(text: string): void {
    if (this.shown !== '') this.output.inPlace?.clear();
    this.output.line(text);
    if (this.shown !== '') this.output.inPlace?.show(this.shown);
  }

  /** Stops, and clears the line drawn in place. */
  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    if (this.shown !== '') this.output.inPlace?.clear();
    this.shown = '';
  }

  private tick(): void {
    if (this.output.inPlace !== undefined) {
      this.shown = this.render();
      this.output.inPlace.show(this.shown);
    } else if (Date.now() - this.lastLineAt >= LINE_EVERY_MS - TICK_MS / 2) {
      this.lastLineAt = Date.now();
      this.output.line(this.render());
    }
  }
}
