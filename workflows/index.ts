export { stackCheck } from './stack-check.ts';
