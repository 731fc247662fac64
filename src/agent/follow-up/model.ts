export async function writeWithModel(..._args: unknown[]): Promise<null> { return null; }
