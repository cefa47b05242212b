import { Module } from '@nestjs/common';
import { UsageController } from './usage.controller.js';
import { UsageService } from './usage.service.js';

/** Usage reports: `GET /usage` (a person's own) and `GET /admin/usage` (admins and operators). */
@Module({ controllers: [UsageController], providers: [UsageService] })
export class UsageModule {}
